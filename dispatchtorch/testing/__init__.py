"""torch.testing: assert_close (and its deprecated assert_allclose) and make_tensor, as
PyTorch's test suites and many users' tests call them."""
from __future__ import annotations

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
