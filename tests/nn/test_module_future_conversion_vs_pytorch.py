"""torch.__future__'s two switches against PyTorch 2.13: what nn.Module's conversions
(`.double()`, `.to()`, `.float()` that changes nothing, `.to_empty()`) and load_state_dict
(`assign`, Tensor.module_load) do to the parameter and .grad objects, for each combination
of the switches."""
import itertools

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

SWITCHES = list(itertools.product([False, True], [False, True]))   # (overwrite, swap)


@pytest.fixture(autouse=True)
def _restore_switches():
    yield
    for tl in (dt, torch):
        tl.__future__.set_overwrite_module_params_on_conversion(False)
        tl.__future__.set_swap_module_params_on_conversion(False)


def _set(tl, overwrite, swap):
    tl.__future__.set_overwrite_module_params_on_conversion(overwrite)
    tl.__future__.set_swap_module_params_on_conversion(swap)


def _outcome(fn, tl):
    try:
        return ("ok", fn(tl))
    except Exception as exc:        # the class and the message's first line are compared
        return (type(exc).__name__, str(exc).split("\n")[0])


def _model(tl):
    tl.manual_seed(0)
    m = tl.nn.Linear(3, 2)
    with tl.no_grad():
        m.weight.copy_(tl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        m.bias.copy_(tl.tensor([0.5, -0.5]))
    return m


def _name(dtype):
    return str(dtype).split(".")[-1]


def _describe(m, before, grads_before):
    params = list(m.parameters())
    return {
        "same_params": [p is q for p, q in zip(params, before)],
        "same_grads": [p.grad is g for p, g in zip(params, grads_before)],
        "classes": [type(p).__name__ for p in params],
        "dtypes": [_name(p.dtype) for p in params],
        "grad_dtypes": [None if p.grad is None else _name(p.grad.dtype) for p in params],
        "requires_grad": [p.requires_grad for p in params],
        "values": [p.detach().numpy().tolist() for p in params],
        "old_values": [p.detach().numpy().tolist() for p in before],
    }


@pytest.mark.parametrize("overwrite,swap", SWITCHES)
@pytest.mark.parametrize("conversion", ["double", "to_float64", "float_unchanged"])
@pytest.mark.parametrize("with_grad", [False, True])
def test_conversions(overwrite, swap, conversion, with_grad):
    def run(tl):
        _set(tl, overwrite, swap)
        m = _model(tl)
        if with_grad:
            m(tl.ones(1, 3)).sum().backward()
        before = list(m.parameters())
        grads = [p.grad for p in before]
        if conversion == "double":
            m.double()
        elif conversion == "to_float64":
            m.to(tl.float64)
        else:
            m.float()
        return _describe(m, before, grads)
    ours, theirs = _outcome(run, dt), _outcome(run, torch)
    assert ours == theirs


@pytest.mark.parametrize("overwrite,swap", SWITCHES)
def test_to_empty_keeps_shapes(overwrite, swap):
    def run(tl):
        _set(tl, overwrite, swap)
        m = _model(tl)
        before = list(m.parameters())
        m.to_empty(device="cpu")
        return ([p is q for p, q in zip(m.parameters(), before)],
                [list(p.shape) for p in m.parameters()])
    assert _outcome(run, dt) == _outcome(run, torch)


@pytest.mark.parametrize("swap", [False, True])
def test_an_optimizer_built_before_keeps_training_after_double(swap):
    def run(tl):
        _set(tl, False, swap)
        m = _model(tl)
        opt = tl.optim.SGD(m.parameters(), lr=0.1)
        m.double()
        m(tl.ones(1, 3, dtype=tl.float64)).sum().backward()
        opt.step()
        return [p.detach().numpy().tolist() for p in m.parameters()]
    assert _outcome(run, dt) == _outcome(run, torch)


def test_swap_during_a_live_graph_poisons_its_backward():
    # x does not require grad: the graph holds the weight only by its leaf edge
    def run(tl):
        _set(tl, False, True)
        m = _model(tl)
        y = m(tl.ones(1, 3))
        m.double()
        y.sum().backward()
    ours, theirs = _outcome(run, dt), _outcome(run, torch)
    assert ours[0] == theirs[0] == "RuntimeError"
    assert ours[1].startswith("Trying to execute AccumulateGrad node that was poisoned")
    assert ours == theirs


def test_swap_refused_while_a_forward_graph_saved_the_weight():
    # x requires grad: the weight is saved for x's gradient, so something holds it
    def run(tl):
        _set(tl, False, True)
        m = _model(tl)
        y = m(tl.ones(1, 3, requires_grad=True))  # noqa: F841
        m.double()
    ours, theirs = _outcome(run, dt), _outcome(run, torch)
    assert ours == theirs == ("RuntimeError", "_apply(): Couldn't swap Linear.weight")


def test_swap_leaves_the_grad_unchanged_when_refused():
    m = _model(dt)
    m(dt.ones(1, 3)).sum().backward()
    g = m.weight.grad
    dt.__future__.set_swap_module_params_on_conversion(True)
    keep = m(dt.ones(1, 3, requires_grad=True))  # noqa: F841  (its graph saved the weight)
    with pytest.raises(RuntimeError, match="Couldn't swap Linear.weight"):
        m.double()
    assert m.weight.grad is g and m.weight.dtype == dt.float32


# -- load_state_dict -------------------------------------------------------------------

@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("value_kind", ["tensor", "parameter", "float64"])
def test_load_state_dict(swap, assign, value_kind):
    def run(tl):
        _set(tl, False, swap)
        m = _model(tl)
        before = list(m.parameters())
        w = tl.tensor([[9.0, 8.0, 7.0], [6.0, 5.0, 4.0]])
        if value_kind == "parameter":
            w = tl.nn.Parameter(w, requires_grad=False)
        elif value_kind == "float64":
            w = w.double()
        sd = {"weight": w, "bias": tl.tensor([1.0, 2.0])}
        m.load_state_dict(sd, assign=assign)
        w_after = m.weight
        with tl.no_grad():
            w.add_(100)                  # does the module's weight share the value's memory?
        return {**_describe(m, before, [None, None]),
                "is_value": [w_after is w],
                "after_add": w_after.detach().numpy().tolist()}
    ours, theirs = _outcome(run, dt), _outcome(run, torch)
    assert ours == theirs


def test_module_load_override_runs_under_swap():
    def run(tl):
        class Halved(tl.nn.Parameter):
            def module_load(self, other, assign=False):
                return (other / 2).detach()
        _set(tl, False, True)
        m = _model(tl)
        m.weight = Halved(tl.zeros(2, 3))
        w = m.weight
        m.load_state_dict({"weight": tl.full((2, 3), 4.0), "bias": tl.zeros(2)})
        return m.weight is w, type(m.weight).__name__, m.weight.detach().numpy().tolist()
    assert _outcome(run, dt) == _outcome(run, torch)


def test_module_load_returning_an_input_is_refused():
    def run(tl):
        class Same(tl.nn.Parameter):
            def module_load(self, other, assign=False):
                return other
        _set(tl, False, True)
        m = _model(tl)
        m.bias = Same(tl.zeros(2))
        m.load_state_dict({"weight": tl.zeros(2, 3), "bias": tl.ones(2)})
    expected = ("While swapping the parameter named \"bias\"", "an exception occurred : "
                "('module_load returned one of self or other, please .detach() the result if "
                "returning one of the inputs in module_load',).")
    for tl in (dt, torch):
        with pytest.raises(RuntimeError) as info:
            run(tl)
        lines = str(info.value).split("\n")
        assert lines[0] == "Error(s) in loading state_dict for Linear:"
        assert lines[1].startswith("\t" + expected[0]) and lines[1].endswith(expected[1])


def test_tensor_module_load_default():
    a = dt.zeros(3)
    v = dt.tensor(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    copied = a.module_load(v)
    assert copied is not a and copied is not v
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0])    # copied into self
    assigned = dt.zeros(3).module_load(v, assign=True)
    v.add_(1)
    np.testing.assert_array_equal(assigned.numpy(), [2.0, 3.0, 4.0])   # v's memory


def test_switches_default_off_and_set():
    for tl in (dt, torch):
        assert tl.__future__.get_overwrite_module_params_on_conversion() is False
        assert tl.__future__.get_swap_module_params_on_conversion() is False
    dt.__future__.set_swap_module_params_on_conversion(True)
    assert dt.__future__.get_swap_module_params_on_conversion() is True


def test_a_refused_second_parameter_leaves_the_first_converted():
    def run(tl):
        _set(tl, False, True)
        m = _model(tl)
        m(tl.ones(1, 3)).sum().backward()
        before = list(m.parameters())
        grads = [p.grad for p in before]
        view = m.bias[:1]  # noqa: F841  (holds the bias)
        try:
            m.double()
        except RuntimeError as exc:
            return str(exc), _describe(m, before, grads)
    ours, theirs = _outcome(run, dt), _outcome(run, torch)
    assert ours == theirs
    assert ours[1][0] == "_apply(): Couldn't swap Linear.bias"
    assert ours[1][1]["dtypes"] == ["float64", "float32"]
