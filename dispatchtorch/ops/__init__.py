"""The public op functions. Each module declares a family's schema rows and their
function forms; methods.py binds the Tensor methods and operators."""
from . import creation, elementwise, indexing, linalg, memory, pointwise, random, reductions, views
from . import nn_ops  # noqa: F401  (the nn layers' composite rows)
from ._elementwise import result_type, can_cast
from .creation import (arange, as_tensor, asarray, bernoulli, empty, empty_like, eye, from_dlpack,
                       from_numpy, full, full_like, get_default_device, linspace, logspace,
                       multinomial, normal, ones, ones_like, rand, rand_like, randint,
                       randint_like, randn, randn_like, randperm, set_default_device, tensor,
                       zeros, zeros_like)
from .indexing import (argwhere, gather, index_add, index_put, index_select, masked_fill,
                       masked_select, nonzero, scatter, scatter_add, scatter_reduce, take,
                       take_along_dim)
from .linalg import bmm, matmul, mm
from .memory import cat, clone, concat, concatenate, contiguous, stack
from .pointwise import *  # noqa: F401,F403
from .pointwise import FUNCTIONS as _F, INPLACE as _I
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from .reductions import (all, amax, amin, any, argmax, argmin, count_nonzero, max, mean, min,
                         nanmean, nansum, prod, sum, sum_to)
from .views import (as_strided, broadcast_to, chunk, diagonal, expand, flatten, movedim,
                    moveaxis, narrow, permute, reshape, select, split, squeeze, swapaxes,
                    swapdims, t, transpose, unbind, unflatten, unsqueeze)
from .views import view_scatter as as_strided_scatter
from . import methods  # noqa: F401  (binds Tensor methods)

globals().update(_F)
globals().update(_I)
abs = _F["abs"]
absolute = abs
negative = _F["neg"]
