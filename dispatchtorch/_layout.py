"""torch.layout: how a tensor's elements are kept (strided, sparse COO or sparse CSR)."""


class layout:
    """One of the module-level layouts `strided`, `sparse_coo` and `sparse_csr`, compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"dispatchtorch.{self.name}"

    def __reduce__(self):
        return self.name     # pickled by name: the module-level object below


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")


def require_strided(layout_arg, op):
    """Factories take `layout=` as PyTorch's do; only strided tensors are made by them, so
    anything else is refused rather than silently given a dense result."""
    if layout_arg is None or layout_arg is strided:
        return
    if not isinstance(layout_arg, layout):
        raise TypeError(f"{op}(): argument 'layout' must be torch.layout, not "
                        f"{type(layout_arg).__name__}")
    raise NotImplementedError(f"{op}: layout={layout_arg!r} is not implemented here; factories "
                              "make torch.strided tensors (build a sparse COO tensor with "
                              "torch.sparse_coo_tensor or Tensor.to_sparse)")


class memory_format:
    """One of contiguous_format, preserve_format, channels_last and channels_last_3d,
    compared by identity. Results are laid out as PyTorch lays them out
    (_output_strides.py); Tensor.is_contiguous answers for the tensor's actual strides."""

    __slots__ = ("name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'dispatchtorch.memory_format' instances")

    def __repr__(self):
        return f"dispatchtorch.{self.name}"

    def __reduce__(self):
        return self.name     # pickled by name: the module-level object below


def _memory_format(name):
    obj = object.__new__(memory_format)
    obj.name = name
    return obj


contiguous_format = _memory_format("contiguous_format")
preserve_format = _memory_format("preserve_format")
channels_last = _memory_format("channels_last")
channels_last_3d = _memory_format("channels_last_3d")

# the dims of a 4-D / 5-D tensor from innermost to outermost in channels-last order
CHANNELS_LAST_ORDER = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}
