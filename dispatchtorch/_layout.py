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
