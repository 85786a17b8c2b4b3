"""torch.utils.swap_tensors against PyTorch 2.13: the same contents, classes and
attributes after a swap, and the same refusals (weakrefs, tensors something else holds:
views, saved values, .grad) and the poisoned leaf's backward."""
import weakref

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _outcome(fn, tl):
    """What fn(tl) returns, or its exception's class name and first line."""
    try:
        return ("ok", fn(tl))
    except Exception as exc:        # the class and message are compared
        return (type(exc).__name__, str(exc).split("\n")[0])


def _same(fn):
    ours, theirs = _outcome(fn, dt), _outcome(fn, torch)
    assert ours == theirs
    return ours


def _v(t):
    return t.detach().numpy().tolist()


def test_contents_classes_and_attributes_swap():
    def run(tl):
        a = tl.tensor([1.0, 2.0, 3.0])
        b = tl.nn.Parameter(tl.tensor([[4.0, 5.0]]))
        a.foo = "a's"
        ida, idb = id(a), id(b)
        tl.utils.swap_tensors(a, b)
        return (id(a) == ida, id(b) == idb, type(a).__name__, type(b).__name__, _v(a), _v(b),
                a.requires_grad, b.requires_grad, b.foo, hasattr(a, "foo"), list(a.shape))
    assert _same(run)[0] == "ok"


def test_grad_and_dtype_travel():
    def run(tl):
        a = tl.tensor([1.0, 2.0], requires_grad=True)
        (a * 3).sum().backward()
        b = tl.tensor([1, 2, 3], dtype=tl.int64)
        tl.utils.swap_tensors(a, b)
        return (str(a.dtype).split(".")[-1], str(b.dtype).split(".")[-1], a.grad,
                _v(b.grad), b.requires_grad, a.requires_grad)
    assert _same(run)[0] == "ok"


def test_a_swapped_tensor_computes_with_its_new_contents():
    def run(tl):
        w = tl.tensor([1.0, 2.0], requires_grad=True)
        tl.utils.swap_tensors(w, tl.tensor([10.0, 20.0], requires_grad=True))
        (w * w).sum().backward()
        return _v(w.grad)
    assert _same(run) == ("ok", [20.0, 40.0])


def test_weakrefs_refuse():
    def first(tl):
        a = tl.zeros(2)
        keep = weakref.ref(a)  # noqa: F841
        tl.utils.swap_tensors(a, tl.zeros(2))

    def second(tl):
        b = tl.zeros(2)
        keep = weakref.ref(b)  # noqa: F841
        tl.utils.swap_tensors(tl.zeros(2), b)
    assert _same(first)[0] == "RuntimeError"
    assert _same(second) == ("RuntimeError", "Cannot swap t2 because it has weakref "
                                             "associated with it")


def test_a_view_holding_the_tensor_refuses():
    def run(tl):
        a = tl.zeros(3)
        v = a[:1]  # noqa: F841
        tl.utils.swap_tensors(a, tl.zeros(3))
    assert _same(run)[0] == "RuntimeError"


def test_a_view_itself_swaps():
    def run(tl):
        base = tl.arange(4.0)
        v = base[1:3]
        tl.utils.swap_tensors(v, tl.tensor([7.0]))
        return _v(v), _v(base)
    assert _same(run) == ("ok", ([7.0], [0.0, 1.0, 2.0, 3.0]))


def test_saved_for_backward_refuses():
    def run(tl):
        a = tl.tensor([1.0, 2.0], requires_grad=True)
        y = (a * a).sum()  # noqa: F841
        tl.utils.swap_tensors(a, tl.zeros(2))
    out = _same(run)
    assert out[0] == "RuntimeError" and "got 4" in out[1]


def test_a_saved_tensor_not_requiring_grad_refuses():
    def run(tl):
        w = tl.tensor([1.0, 2.0], requires_grad=True)
        x = tl.tensor([3.0, 4.0])
        y = (w * x).sum()  # noqa: F841
        tl.utils.swap_tensors(x, tl.zeros(2))
    assert _same(run)[0] == "RuntimeError"


def test_a_tensor_a_custom_function_saved_refuses():
    def run(tl):
        class Square(tl.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g
        a = tl.tensor([1.0, 2.0], requires_grad=True)
        y = Square.apply(a)  # noqa: F841
        tl.utils.swap_tensors(a, tl.zeros(2))
    out = _same(run)
    assert out[0] == "RuntimeError" and "Expected use_count of t1" in out[1]


def test_a_leaf_in_a_live_graph_swaps_and_its_backward_raises():
    def run(tl):
        a = tl.tensor([1.0, 2.0], requires_grad=True)
        y = (a * 2).sum()
        tl.utils.swap_tensors(a, tl.zeros(2))
        swapped = _v(a)
        y.backward()
        return swapped
    out = _same(run)
    assert out[0] == "RuntimeError" and "poisoned by swap_tensors" in out[1]


def test_a_graph_made_after_the_swap_runs():
    def run(tl):
        a = tl.tensor([1.0, 2.0], requires_grad=True)
        (a * 2).sum().backward()            # that graph is gone
        tl.utils.swap_tensors(a, tl.tensor([5.0, 6.0], requires_grad=True))
        (a * 3).sum().backward()
        return _v(a.grad) if a.grad is not None else None
    assert _same(run) == ("ok", [3.0, 3.0])


def test_a_tensor_that_is_some_grad_refuses():
    def run(tl):
        p = tl.tensor([1.0], requires_grad=True)
        p.sum().backward()
        tl.utils.swap_tensors(p.grad, tl.zeros(1))
    assert _same(run)[0] == "RuntimeError"


def test_self_swap_and_non_tensor():
    def self_swap(tl):
        a = tl.tensor([1.0])
        tl.utils.swap_tensors(a, a)
        return _v(a)

    def non_tensor(tl):
        tl.utils.swap_tensors(tl.zeros(1), 5)
    assert _same(self_swap) == ("ok", [1.0])
    assert _same(non_tensor)[0] == "AttributeError"


def test_values_against_numpy():
    a = dt.tensor(np.arange(6.0).reshape(2, 3))
    b = dt.tensor(np.ones(4, dtype=np.float32))
    dt.utils.swap_tensors(a, b)
    np.testing.assert_array_equal(a.numpy(), np.ones(4, dtype=np.float32))
    np.testing.assert_array_equal(b.numpy(), np.arange(6.0).reshape(2, 3))
    a.add_(1)                    # the swapped tensors own independent memory
    np.testing.assert_array_equal(b.numpy(), np.arange(6.0).reshape(2, 3))
