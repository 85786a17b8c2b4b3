"""Questions a tensor answers about itself (its size, dtype, storage, memory order), as
PyTorch's Tensor.is_same_size, is_signed, is_nonzero, is_set_to, is_distributed and
dim_order answer them: no op runs, nothing is recorded."""
from __future__ import annotations

from .._output_strides import is_channels_last, is_contiguous
from .._tensor import Tensor


def _check_tensor(x, op, arg, pos):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def is_same_size(input, other):
    """Whether the two shapes are equal (dtype, device and strides do not matter)."""
    _check_tensor(input, "is_same_size", "input", 1)
    _check_tensor(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """Whether the dtype holds negative values (False for bool and uint8)."""
    _check_tensor(input, "is_signed", "input", 1)
    return input.dtype.is_signed


def is_nonzero(input):
    """The one element's truth; PyTorch's errors for no element or several."""
    _check_tensor(input, "is_nonzero", "input", 1)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_set_to(self, tensor):
    """Whether both view the same storage with the same offset, sizes and strides (as
    PyTorch, the dtype is not compared)."""
    _check_tensor(tensor, "is_set_to", "tensor", 1)
    if self.layout is not tensor.layout or self.is_sparse:
        return False
    return (self._whole_storage() is tensor._whole_storage()
            and self._offset == tensor._offset and self._shape == tensor._shape
            and self.stride() == tensor.stride())


def is_distributed(input):
    """Always False, as in PyTorch: no tensor is a distributed tensor of the old THD API."""
    _check_tensor(input, "is_distributed", "input", 1)
    return False


# -- dim_order: PyTorch 2.13's Tensor.dim_order (torch/_tensor.py, _prims_common) ------------

def _should_swap(shape, stride, a, b):
    """PyTorch's comparison of two dims for the physical order: 1 swap, -1 keep, 0 tie."""
    def ge(x, y):
        if y == 0:
            return True
        if x == 0:
            return False
        return x >= y or x % y == 0

    sa, sb = stride[a], stride[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    if ge(sa, sb):
        return 1
    return 0


def _logical_to_physical(shape, stride, check):
    """compute_elementwise_output_logical_to_physical_perm for one tensor."""
    ndim = len(shape)
    if ndim == 0:
        return [], False
    if ndim == 1:
        return [0], False
    contiguous, channels_last = is_contiguous(shape, stride), is_channels_last(shape, stride)
    if contiguous and not channels_last:
        return list(range(ndim)), False
    if channels_last and not contiguous:
        return [0, *range(2, ndim), 1], False
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):            # insertion sort, ties left where they are
        dim1 = i
        for dim0 in reversed(range(i)):
            c = _should_swap(shape, stride, perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    ambiguous = False
    if check:
        ambiguous = any(_should_swap(shape, stride, perm[i], perm[i + 1]) != -1
                        for i in range(ndim - 1))
    return list(reversed(perm)), ambiguous


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory. ambiguity_check=True raises where
    several orders fit (a size-1 dim, equal neighbouring strides). A list of memory
    formats is PyTorch's other form; dispatchtorch has no torch.memory_format objects,
    so only the empty list (which checks as True does) can be given."""
    if self.is_sparse:
        where = "" if self.device.type == "cpu" else f"{self.device.type}."
        raise AttributeError(f"Can't get dim order on sparse type: torch.{where}sparse."
                             f"{self.dtype.pt_name}Tensor Use Tensor.to_dense() to convert to a "
                             f"dense tensor first.")
    if not isinstance(ambiguity_check, bool) and (not isinstance(ambiguity_check, list)
                                                  or ambiguity_check):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    shape, stride = tuple(self.shape), tuple(self.stride())
    if ambiguity_check is not False:    # True or []: no memory format can be the unique one
        multiple = any(a == b for a, b in zip(stride, stride[1:])) or 1 in shape
        if multiple:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    perm, ambiguous = _logical_to_physical(shape, stride, ambiguity_check is True)
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


PUBLIC = {"is_same_size": is_same_size, "is_signed": is_signed, "is_nonzero": is_nonzero,
          "is_distributed": is_distributed}
METHODS = {**PUBLIC, "is_set_to": is_set_to, "dim_order": dim_order}
