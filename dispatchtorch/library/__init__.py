"""torch.library: user-defined custom ops (custom_op and its registrations, infer_schema,
opcheck, torch.ops.<namespace>.<op>; the older Library / define / impl). docs/custom-ops.md says what differs from PyTorch."""
from __future__ import annotations

import warnings

from ._library_class import Library, define, impl
from ._opcheck import OpCheckError, opcheck
from ._schema import infer_schema
from .custom_ops import CustomOpDef, custom_op, resolve

__all__ = ["CustomOpDef", "Library", "OpCheckError", "custom_op", "define", "impl",
           "impl_abstract", "infer_schema", "opcheck",
           "register_autograd", "register_fake", "register_kernel"]


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """register_kernel of the custom op `op` (its def, torch.ops entry or qualname)."""
    return resolve(op, "register_kernel").register_kernel(device_types, func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """register_fake of the custom op `op`; usable as a decorator."""
    opdef = resolve(op, "register_fake")
    return opdef.register_fake if func is None else opdef.register_fake(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """register_autograd of the custom op `op`."""
    resolve(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """The deprecated name of register_fake (PyTorch warns the same way)."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func)
