"""torch.layout: how a tensor's elements are kept (strided, or sparse COO)."""


class layout:
    """One of the module-level layouts `strided` and `sparse_coo`, compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"dispatchtorch.{self.name}"

    def __reduce__(self):
        return self.name     # pickled by name: the module-level object below


strided = layout("strided")
sparse_coo = layout("sparse_coo")
