"""einsum and tensordot: composites that reduce every contraction to views, sums and
the batched matmul prim (left to right, one pair at a time, as PyTorch does)."""
from __future__ import annotations

import functools
import operator

from .. import _dtype as D
from .._shape import numel
from .._tensor import Tensor
from ._composite import composite, run
from .linalg import _batched
from ._args import write_out

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _parse_term(term, ndim, n_ell, position):
    """Labels of one operand: letters are themselves, the ellipsis covers the dims left
    over and becomes labels 0..n_ell-1 (right-aligned, so ellipses broadcast)."""
    if "..." in term:
        head, tail = term.split("...", 1)
        if "." in head or "." in tail:
            raise RuntimeError("einsum(): found '.' for operand {position} that is not part of "
                               "any ellipsis")
        covered = ndim - len(head) - len(tail)
        if covered < 0:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(head) + len(tail)}) is more than the number of dimensions "
                               f"({ndim}) for operand {position}")
        return list(head) + list(range(n_ell - covered, n_ell)) + list(tail)
    if "." in term:
        raise RuntimeError(f"einsum(): found '.' for operand {position} that is not part of any "
                           f"ellipsis")
    if len(term) != ndim:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does "
                           f"not match the number of dimensions ({ndim}) for operand {position}"
                           f"{'' if len(term) > ndim else ' and no ellipsis was given'}")
    for c in term:
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {term.index(c)} in "
                               f"the equation string, subscripts must be in [a-zA-Z]")
    return list(term)


@functools.lru_cache(maxsize=512)
def plan(equation, ndims):
    """(labels of each operand, output labels) for an equation and operand ranks."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(ndims):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(ndims):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    n_ell = 0
    for t, n in zip(terms, ndims):
        if "..." in t:
            n_ell = max(n_ell, n - len(t.replace("...", "")))
    labels = [_parse_term(t, n, n_ell, i) for i, (t, n) in enumerate(zip(terms, ndims))]
    if arrow:
        if "..." in rhs:
            head, tail = rhs.split("...", 1)
            out = list(head) + list(range(n_ell)) + list(tail)
        else:
            out = list(rhs)
        seen = set()
        for c in out:
            if isinstance(c, str):
                if c not in _LETTERS:
                    raise RuntimeError("einsum(): invalid subscript in the output")
                if not any(c in lab for lab in labels):
                    raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                       f"equation for any input operand")
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                                   f"output")
            seen.add(c)
    else:
        counts = {}
        for lab in labels:
            for c in lab:
                if isinstance(c, str):
                    counts[c] = counts.get(c, 0) + 1
        out = list(range(n_ell)) + sorted((c for c, k in counts.items() if k == 1),
                                          key=_LETTERS.index)
    return tuple(tuple(lab) for lab in labels), tuple(out)


def _diagonals(x, labels):
    """Take the diagonal of every repeated label, so each label appears once."""
    labels = list(labels)
    while True:
        for i, c in enumerate(labels):
            j = labels.index(c, i + 1) if labels.count(c) > 1 else -1
            if j >= 0:
                break
        else:
            return x, labels
        x = x.diagonal(0, i, j)           # the diagonal becomes the last dim
        labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [c]


def _sum_out(x, labels, keep):
    dims = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not dims:
        return x, labels
    return x.sum(dims), [c for c in labels if c in keep]


def _contract(a, la, b, lb, later, sizes):
    """a (labels la) times b (labels lb), summing the shared labels not needed later."""
    batch = [c for c in la if c in lb and c in later]
    summed = [c for c in la if c in lb and c not in later]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]

    def arrange(x, lx, groups):
        order = [lx.index(c) for g in groups for c in g]
        if order != list(range(len(order))):
            x = x.permute(order)
        full = tuple(sizes[c] for g in groups for c in g)
        if tuple(x.shape) != full:
            x = x.expand(full)      # size-1 dims broadcast against the other operand
        target = tuple(numel(tuple(sizes[c] for c in g)) for g in groups)
        return (x if tuple(x.shape) == target else x.reshape(target)), full

    if a.dtype is not b.dtype:          # an earlier sum made int64 (as PyTorch's does)
        dt = D.promote_types(a.dtype, b.dtype)
        a, b = a.to(dt), b.to(dt)
    a3, _ = arrange(a, la, (batch, a_only, summed))
    b3, _ = arrange(b, lb, (batch, summed, b_only))
    r = _batched(a3, b3)
    shape = tuple(sizes[c] for c in batch + a_only + b_only)
    return (r if tuple(r.shape) == shape else r.reshape(shape)), batch + a_only + b_only


def _einsum(*operands, equation):
    labels, out = plan(equation, tuple(x.dim() for x in operands))
    sizes = {}
    for i, (x, lab) in enumerate(zip(operands, labels)):
        for c, n in zip(lab, x.shape):
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = n
            elif n != seen and n != 1:
                name = c if isinstance(c, str) else "..."
                raise RuntimeError(f"einsum(): subscript {name} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {seen}")
    work = []
    for i, (x, lab) in enumerate(zip(operands, labels)):
        x, lab = _diagonals(x, lab)
        others = set(out)
        for j, other in enumerate(labels):
            if j != i:
                others.update(other)
        x, lab = _sum_out(x, lab, others)
        work.append((x, lab))
    x, lab = work[0]
    for k in range(1, len(work)):
        y, ly = work[k]
        later = set(out)
        for z in work[k + 1:]:
            later.update(z[1])
        x, lab = _sum_out(x, lab, later | set(ly))
        y, ly = _sum_out(y, ly, later | set(lab))
        x, lab = _contract(x, lab, y, ly, later, sizes)
    x, lab = _sum_out(x, lab, set(out))
    order = [lab.index(c) for c in out]
    if order != list(range(len(order))):
        x = x.permute(order)
    target = tuple(sizes[c] for c in out)
    return x.expand(target) if x.shape != target else x


EINSUM = composite("einsum", _einsum, kind="linalg", args=("operands",),
                   signature="einsum(equation, *operands)",
                   doc="Einstein summation (ellipsis, repeated subscripts, sublist form): "
                       "diagonals, sums and pairwise matmul, left to right", opmath=True)


def _from_sublists(args):
    """einsum(op1, [0, 1], op2, [1, 2], [0, 2]) -> an equation string and the operands."""
    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            else:
                i = operator.index(s)
                if not 0 <= i < 52:
                    raise RuntimeError(f"einsum(): subscript in subscript list is not within the "
                                       f"valid range [0, 52), got {i}")
                out.append(_LETTERS[26 + i] if i < 26 else _LETTERS[i - 26])
        return "".join(out)
    out = args[-1] if len(args) % 2 else None         # an odd count ends with the output
    pairs = args[:-1] if out is not None else args
    operands = list(pairs[0::2])
    eq = ",".join(letters(s) for s in pairs[1::2])
    if out is not None:
        eq += "->" + letters(out)
    return eq, operands


def einsum(*args):
    if not args:
        raise TypeError("einsum(): missing the equation")
    if isinstance(args[0], str):
        equation = args[0]
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:
        equation, operands = _from_sublists(args)
    for i, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(x).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    dt = operands[0].dtype
    for x in operands[1:]:
        if x.dtype is not dt:
            raise RuntimeError(f"expected scalar type {dt.pt_name} but found {x.dtype.pt_name}")
    return run(EINSUM, tuple(operands), {"equation": equation})


# -- tensordot ---------------------------------------------------------------------------------

def _tensordot(a, b, dims_a, dims_b):
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = numel(tuple(a.shape[d] for d in dims_a))
    a2 = a.permute(free_a + list(dims_a)).reshape(numel(tuple(a.shape[d] for d in free_a)), k)
    b2 = b.permute(list(dims_b) + free_b).reshape(k, numel(tuple(b.shape[d] for d in free_b)))
    return _batched(a2, b2).reshape(tuple(a.shape[d] for d in free_a) +
                                    tuple(b.shape[d] for d in free_b))


TENSORDOT = composite("tensordot", _tensordot, kind="linalg", args=("a", "b"), dtypes="numeric",
                      signature="tensordot(a, b, dims=2)",
                      doc="sum over the given dims of a and b: one reshape and one matmul")


def tensordot(a, b, dims=2, out=None):
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"tensordot(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = dims
        if isinstance(dims_a, int) or isinstance(dims_b, int):
            raise TypeError("tensordot(): argument 'dims_self' must be tuple of ints, not int")
        dims_a, dims_b = list(dims_a), list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    from .._shape import norm_dim
    dims_a = [norm_dim(d, a.dim(), "tensordot") for d in dims_a]
    dims_b = [norm_dim(d, b.dim(), "tensordot") for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        # ATen: a size-1 dim contracts with any size (the other side is summed over it)
        if a.shape[da] != b.shape[db] and b.shape[db] == 1:
            a = a.sum(da, keepdim=True, dtype=a.dtype)
        elif a.shape[da] != b.shape[db] and a.shape[da] == 1:
            b = b.sum(db, keepdim=True, dtype=b.dtype)
        elif a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in "
                               f"dim {db}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.pt_name} but found {b.dtype.pt_name}")
    r = run(TENSORDOT, (a, b), {"dims_a": tuple(dims_a), "dims_b": tuple(dims_b)})
    if out is not None:
        return write_out(out, r)
    return r
