"""linear, bilinear, dropout, embedding, one_hot."""
from __future__ import annotations

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor
from ...ops import nn_ops as N
from ...ops._checks import range_check
from ...ops._out import write_out
from ...ops.gather_scatter import _bounds


def linear(input, weight, bias=None, *, out=None):
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        bad = input if not isinstance(input, Tensor) else weight
        raise TypeError(f"linear(): argument must be Tensor, not {type(bad).__name__}")
    if weight.dim() not in (1, 2) or input.dim() == 0:
        raise RuntimeError(f"linear: expected a 1-D or 2-D weight and an input with at least one "
                           f"dim, got weight {list(weight.shape)} and input {list(input.shape)}")
    if weight.dim() == 1:
        r = input @ weight
        if bias is not None:
            r = r + bias
    else:
        if input.shape[-1] != weight.shape[1]:
            rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                               f"and {weight.shape[1]}x{weight.shape[0]})")
        if input.dtype is not weight.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{input.dtype.pt_name} and {weight.dtype.pt_name}")
        if bias is not None and bias.shape[-1:] != weight.shape[:1] and bias.numel() != 1:
            raise RuntimeError(f"linear: bias of shape {list(bias.shape)} does not match "
                               f"{weight.shape[0]} output features")
        r = N.LINEAR(input, weight, bias)
    # out= inline, not through takes_out's wrapper: linear is on the training hot path
    return r if out is None else write_out(out, r, "linear", (input, weight, bias))


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = input1 @ weight[o] @ input2 + bias[o], as one matmul and a reduction."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {list(weight.shape)}")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2 or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input sizes {list(input1.shape)} and {list(input2.shape)} "
                           f"do not match weight {list(weight.shape)}")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(tuple(lead) + (out_f,))


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        mask = _ops.empty(input.shape, dtype=D.bool_, device=input.device).bernoulli_(1.0 - p)
        out = N.DROPOUT(input, mask, scale=1.0 / (1.0 - p))
    return input.copy_(out) if inplace else out


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if not isinstance(input, Tensor) or input.dtype not in (D.int64, D.int32):
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {got} instead (while checking "
                           f"arguments for embedding)")
    if weight.dim() != 2:
        raise RuntimeError(f"'weight' must be 2-D, got {list(weight.shape)}")
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    if input.numel():     # (a compiled graph keeps this check: ops/_checks.py)
        range_check(input, 0, num, lambda bad: IndexError(
            f"index out of range in self (embedding of {num} rows got index {bad})"),
            lambda t: _bounds(t, t.numel()))            # one host read, not two
    if input.dtype is not D.int64:
        input = input.long()
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    if scale_grad_by_freq:
        weight = scale_grad_by_frequency(weight, input)
    return N.EMBEDDING(weight, input, padding_idx=padding_idx, num_weights=num)


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rows that `indices` reads and whose norm exceeds max_norm are scaled in place to
    max_norm / (norm + 1e-7), as ATen's embedding_renorm_ (outside autograd)."""
    from ...autograd.grad_mode import no_grad
    from ...ops.norms import vector_norm
    with no_grad():
        rows = indices.reshape(-1).unique()
        if rows.numel() == 0:
            return weight
        w = weight.detach()
        norm = vector_norm(w.index_select(0, rows), norm_type, 1, True)
        scale = _ops.where(norm > max_norm, max_norm / (norm + 1e-7), 1.0)
        w[rows] = w.index_select(0, rows) * scale
    return weight


def scale_grad_by_frequency(weight, indices):
    """weight unchanged forward; its gradient row i divided by how often i occurs."""
    from ...autograd.grad_mode import is_grad_enabled
    if not (weight.requires_grad and is_grad_enabled()):
        return weight
    ones = _ops.ones(indices.numel(), dtype=weight.dtype, device=weight.device)
    counts = _ops.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device).index_add(
        0, indices.reshape(-1), ones)
    return _ScaleRows.apply(weight, 1.0 / counts.clamp_min(1.0))


def _scale_rows_class():
    from ...autograd.function import Function

    class ScaleRows(Function):
        """Identity forward; backward scales each row of the gradient."""

        @staticmethod
        def forward(ctx, weight, scale):
            ctx.save_for_backward(scale)
            return weight.view_as(weight)

        @staticmethod
        def backward(ctx, grad):
            scale, = ctx.saved_tensors
            return grad * scale.reshape((-1,) + (1,) * (grad.dim() - 1)), None
    return ScaleRows


_ScaleRows = _scale_rows_class()


def one_hot(tensor, num_classes=-1):
    if not isinstance(tensor, Tensor) or tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.amax().item()) + 1
    if tensor.numel() and (int(tensor.amin().item()) < 0 or int(tensor.amax().item()) >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _ops.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
