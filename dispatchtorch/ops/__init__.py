"""The public op functions. Each module declares a family's schema rows and their
function forms; methods.py binds the Tensor methods and operators."""
from . import (counting, creation, einsum, elementwise, gather_scatter, linalg, memory, norms, pointwise,
               random, reductions, scans, shape_ops, sorting, statistics, views)
from . import nn_ops  # noqa: F401  (the nn layers' composite rows)
from . import optim_ops  # noqa: F401  (the optimizers' fused update rows)
from ._elementwise import result_type, can_cast
from .counting import bincount, unique, unique_consecutive
from .creation import (arange, as_tensor, asarray, empty, empty_like, eye, from_dlpack,
                       from_numpy, full, full_like, get_default_device, linspace, logspace,
                       meshgrid, ones, ones_like, set_default_device, tensor,
                       tril_indices, triu_indices, zeros, zeros_like)
from .random_sampling import (bernoulli, multinomial, normal, rand, rand_like, randint,
                              randint_like, randn, randn_like, randperm)
from .einsum import einsum, tensordot
from .gather_scatter import (argwhere, gather, index_add, index_fill, index_select, masked_fill,
                             masked_scatter, masked_select, nonzero, scatter, scatter_add,
                             scatter_reduce)
from .subscript import index_put, index_put_, take, take_along_dim
from .linalg import (addmm, addmv, baddbmm, bmm, dot, ger, matmul, mm, mv, outer)
from .memory import cat, clone, concat, concatenate, contiguous, stack
from .memory import fill_, zero_  # noqa: F401  (torch.fill_(t, v) / torch.zero_(t))
from .norms import norm
from .pointwise import *  # noqa: F401,F403
from .pointwise import FUNCTIONS as _F, INPLACE as _I
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from .reductions import (all, amax, amin, aminmax, any, argmax, argmin, count_nonzero, max, mean,
                         min, nanmean, nansum, prod, sum, sum_to)
from .scans import cummax, cummin, cumprod, cumsum, logcumsumexp
from .shape_ops import (atleast_1d, atleast_2d, atleast_3d, broadcast_tensors, column_stack,
                        diag, diag_embed, dsplit, dstack, flip, fliplr, flipud, hsplit, hstack,
                        repeat_interleave, roll, row_stack, tensor_split, tile, tril, triu,
                        vsplit, vstack)
from .sorting import (argsort, bucketize, kthvalue, median, msort, nanmedian, searchsorted, sort,
                      topk)
from .statistics import logsumexp, std, std_mean, var, var_mean
from .views import (as_strided, broadcast_to, chunk, diagonal, expand, flatten, movedim,
                    moveaxis, narrow, permute, reshape, select, split, squeeze, swapaxes,
                    swapdims, t, transpose, unbind, unflatten, unsqueeze)
from .views import view_scatter as as_strided_scatter
from . import pointwise_more, products_more, shape_more  # noqa: E402  (PyTorch's wider op set)
from . import decompositions, linalg_more  # noqa: E402,F401  (torch.linalg's decompositions)
from . import linalg_eig  # noqa: E402,F401  (torch.linalg.eig / eigvals)
from . import special_functions  # noqa: E402  (lgamma, digamma, Bessel functions, ...)
from . import complex_ops  # noqa: E402  (complex64/complex128: views, conj, polar, ...)
from . import fft_ops  # noqa: E402,F401  (torch.fft, on the FFT prims)
from . import stft as _stft  # noqa: E402  (torch.stft / istft on torch.fft)
from . import gradient_histogram  # noqa: E402  (torch.gradient, histogram, histogramdd)
globals().update(gradient_histogram.PUBLIC)
from . import nonzero_padded  # noqa: E402  (torch.nonzero_static)
globals().update(nonzero_padded.PUBLIC)
from . import householder  # noqa: E402  (torch.geqrf, torch.ormqr)
globals().update(householder.PUBLIC)
from . import native_norms  # noqa: E402  (torch.native_layer_norm / group_norm / batch_norm)
globals().update(native_norms.PUBLIC)
from . import buffer_factory  # noqa: E402  (torch.frombuffer)
globals().update(buffer_factory.PUBLIC)
from . import storage_methods  # noqa: E402,F401  (Tensor.untyped_storage, storage, set_)
from .._storage import PUBLIC as _STORAGE_PUBLIC  # noqa: E402  (torch.UntypedStorage, ...)
globals().update(_STORAGE_PUBLIC)
globals().update({**pointwise_more.PUBLIC, **products_more.PUBLIC, **shape_more.PUBLIC,
                  **linalg_more.PUBLIC, **special_functions.PUBLIC, **complex_ops.PUBLIC,
                  **_stft.PUBLIC})
from . import tensor_methods_more as _tensor_methods_more  # noqa: E402,F401  (Tensor.new, apply_, map_)
from . import method_aliases as _aliases  # noqa: E402  (second names, in-place aliases)
from . import tensor_predicates as _predicates  # noqa: E402  (is_same_size, dim_order, ...)
from . import diagonal_fill as _diagonal_fill  # noqa: E402,F401  (Tensor.fill_diagonal_)
from . import resize_ops as _resize  # noqa: E402  (resize_, resize_as_, as_strided_, resize)
from . import python_map2 as _map2  # noqa: E402,F401  (Tensor.map2_)
from . import removed_methods as _removed  # noqa: E402,F401  (eig, lstsq, solve, symeig)
from . import subclass_view as _subclass_view  # noqa: E402,F401  (Tensor.as_subclass)
globals().update({**_aliases.PUBLIC, **_predicates.PUBLIC, **_resize.PUBLIC})
from . import methods  # noqa: F401  (binds Tensor methods)

globals().update(_F)
globals().update(_I)
sgn = complex_ops.sgn       # torch.sgn takes complex inputs; torch.sign does not
abs = _F["abs"]
absolute = abs
negative = _F["neg"]

# `from .ops import *` in dispatchtorch/__init__.py takes these: the public functions and
# objects, never the family modules above (torch has no torch.pointwise, torch.views, ...)
import types as _types  # noqa: E402
from . import custom_namespaces as _custom_namespaces  # noqa: E402
from . import aten_namespace as _aten_namespace  # noqa: E402

_aten_namespace.FUNCTIONS = globals()   # torch.ops.aten.<row>.default(...) calls torch.<row>


def __getattr__(name):
    # torch.ops.<namespace> of torch.library's custom ops (only names not defined above)
    return _custom_namespaces.lookup(name)


__all__ = sorted(_n for _n, _v in globals().items()
                 if not _n.startswith("_") and not isinstance(_v, _types.ModuleType))
