"""The issue's reproductions of silent returns, different results and unchecked
errors: each behaves as in PyTorch (class, and a message naming the op)."""
import pytest

from correctness_compare import assert_same, torch

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

CASES = {
    # silently returned where PyTorch refuses
    "index_add_ length": ("index_add_", lambda T: T.zeros(3, 2).index_add_(
        1, T.tensor([0]), T.ones(3, 3))),
    "index_add shape": ("index_add", lambda T: T.zeros(3, 2).index_add(
        1, T.tensor([0]), T.ones(2, 1))),
    "index_add dtype": ("index_add", lambda T: T.zeros(3, 2).index_add(
        1, T.tensor([0]), T.ones(3, 1, dtype=T.float64))),
    "index_add index dtype": ("index_add", lambda T: T.zeros(3, 2).index_add(
        1, T.tensor([0.]), T.ones(3, 1))),
    "index_add ok": (None, lambda T: T.zeros(3, 2).index_add(1, T.tensor([1]), T.ones(3, 1))),
    "expanded add_": ("add_", lambda T: T.zeros(1, 3).expand(2, 3).add_(T.ones(2, 3))),
    "expanded copy_": ("copy_", lambda T: T.zeros(1, 3).expand(2, 3).copy_(T.ones(2, 3))),
    "expanded neg_": ("neg_", lambda T: T.zeros(3, 1).expand(3, 2).neg_()),
    "expanded index_add_": ("index_add_", lambda T: T.zeros(1, 3).expand(2, 3).index_add_(
        0, T.tensor([0]), T.ones(1, 3))),
    "expanded fill_ allowed": (None, lambda T: T.zeros(1, 3).expand(2, 3).fill_(2.)),
    "expanded size-1 add_ allowed": (None, lambda T: T.zeros(1, 3).expand(1, 3).add_(1)),
    "addmm broadcast": ("addmm", lambda T: T.addmm(T.ones(2, 3), T.ones(2, 3), T.ones(3, 1))),
    "addmm ok broadcast": (None, lambda T: T.addmm(T.ones(3), T.ones(2, 3), T.ones(3, 3))),
    "addmv broadcast": ("addmv", lambda T: T.addmv(T.ones(3), T.ones(2, 3), T.ones(3))),
    "int32 overflow": ("tensor", lambda T: T.tensor([2 ** 31], dtype=T.int32)),
    "int32 nan inf": ("tensor", lambda T: T.tensor([float("nan"), float("inf")], dtype=T.int32)),
    "int32 min fits": (None, lambda T: T.tensor([-2 ** 31], dtype=T.int32)),
    "int8 float overflow": ("tensor", lambda T: T.tensor([127.9], dtype=T.int8)),
    "uint8 wraps -1": (None, lambda T: T.tensor([-1], dtype=T.uint8)),
    "uint8 256": ("tensor", lambda T: T.tensor([256], dtype=T.uint8)),
    "int64 overflow": ("tensor", lambda T: T.tensor([2 ** 63])),
    "randperm negative": ("randperm", lambda T: T.randperm(-1)),
    "randperm float": ("randperm", lambda T: T.randperm(3.5)),
    # different results
    "sub alpha promotes": (None, lambda T: T.tensor([1.], dtype=T.float64).sub(
        T.tensor([1.01], dtype=T.bfloat16), alpha=2.5)),
    "add alpha int8": (None, lambda T: T.tensor([1]).add(T.tensor([3], dtype=T.int8), alpha=100)),
    "floor_divide requires grad": (None, lambda T: (T.ones(2, requires_grad=True) // 2)
                                   .requires_grad),
    "floor_divide backward": ("floor_divide", lambda T: (T.ones(2, requires_grad=True) // 2)
                              .sum().backward()),
    # internal errors instead of checked ones
    "stack None": ("stack", lambda T: T.stack([T.ones(2), None])),
    "cat int": ("cat", lambda T: T.cat([T.ones(2), 3])),
    "softmax dim": ("softmax", lambda T: T.ones(2, 3).softmax(-3)),
    "log_softmax dim": ("log_softmax", lambda T: T.ones(2, 3).log_softmax(2)),
    "sum keepdim None": ("sum", lambda T: T.ones(2, 3).sum(-1, keepdim=None)),
    "mean keepdim int": ("mean", lambda T: T.ones(2, 3).mean(-1, keepdim=1)),
    "amax keepdim None": ("amax", lambda T: T.ones(2, 3).amax(-1, keepdim=None)),
    "sum dim out of range": ("sum", lambda T: T.ones(2, 3).sum(2)),
    "index_put_ bool mask": (None, lambda T: T.zeros(2, 3).index_put_(
        (T.tensor([[True, False, True], [False, False, True]]),), T.tensor(5.))),
    "index_put_ value shape": ("index_put_", lambda T: T.zeros(1, 4, 2, dtype=T.int64).index_put_(
        (T.tensor([0, 0, 0]),), T.tensor([1, 2, 3]))),
    "index_put_ dtype": ("index_put_", lambda T: T.zeros(3).index_put_(
        (T.tensor([0]),), T.tensor(1., dtype=T.float64))),
    # nn.functional
    "bce target range": ("binary_cross_entropy", lambda T: T.nn.functional.binary_cross_entropy(
        T.tensor([.5, .5]), T.tensor([2., -1.]))),
    "kl_div negative target": (None, lambda T: T.nn.functional.kl_div(
        T.tensor([.5]), T.tensor([-1.]), reduction="sum")),
    "kl_div zero target": (None, lambda T: T.nn.functional.kl_div(
        T.tensor([.5, .2]), T.tensor([0., .3]), reduction="sum")),
    "softplus beta inf grad": (None, lambda T: _softplus_grad(T, float("inf"))),
    "softplus beta 2 grad": (None, lambda T: _softplus_grad(T, 2.0)),
    "adaptive_avg_pool2d -1": ("adaptive_avg_pool2d", lambda T: T.nn.functional.adaptive_avg_pool2d(
        T.ones(1, 2, 4, 4), -1)),
    "adaptive_avg_pool2d 0": (None, lambda T: T.nn.functional.adaptive_avg_pool2d(
        T.ones(1, 2, 4, 4), 0)),
    "batch_norm bad running_var": ("batch_norm", lambda T: _batch_norm(T, T.ones(2))),
    "batch_norm int running_var": ("batch_norm", lambda T: _batch_norm(T, T.ones(3, dtype=T.int64))),
    "batch_norm 2-d running_var": ("batch_norm", lambda T: _batch_norm(T, T.ones(3, 1))),
    "batch_norm ok": (None, lambda T: _batch_norm(T, T.ones(3))),
}


def _softplus_grad(T, beta):
    x = T.tensor([1., -1., 0., 30.], requires_grad=True)
    T.nn.functional.softplus(x, beta=beta).sum().backward()
    return x.grad


def _batch_norm(T, running_var):
    """The running mean after the call (or the call's error): unchanged when it raises."""
    x = T.arange(12.).reshape(4, 3)
    rm = T.zeros(3)
    try:
        T.nn.functional.batch_norm(x, rm, running_var, training=True)
    finally:
        assert rm.tolist() == [0., 0., 0.] or running_var.shape == (3,)
    return rm


@pytest.mark.parametrize("name", sorted(CASES))
def test_behaves_as_pytorch(name):
    op, program = CASES[name]
    assert_same(program, op)


def test_refused_inplace_leaves_self_and_version():
    import dispatchtorch as dt
    x = dt.zeros(3, 2)
    v = x._version
    with pytest.raises(RuntimeError, match="index_add_"):
        x.index_add_(1, dt.tensor([0]), dt.ones(3, 3))
    assert x.tolist() == [[0., 0.]] * 3 and x._version == v
