"""torch.futures against PyTorch's (a dev-only dependency; skips without it): each scenario
runs on both libraries' Future, recording values, callback order and errors (type and
the message's first line), and the records must be equal."""
from __future__ import annotations

import pickle
import threading
import time

import pytest

import dispatchtorch.futures as ours

torch = pytest.importorskip("torch")
import torch.futures as theirs  # noqa: E402


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__, str(e).split("\n")[0])


def s_set_and_read(F):
    f = F.Future()
    rec = [f.done()]
    f.set_result(3)
    return rec + [f.done(), f.wait(), f.value(), _outcome(lambda: f.set_result(4))]


def s_set_exception(F):
    f = F.Future()
    f.set_exception(ValueError("foo"))
    return [f.done(), _outcome(f.wait), _outcome(f.value),
            _outcome(lambda: F.Future().set_exception(5)),
            _outcome(lambda: F.Future().set_exception(ValueError)),
            _outcome(lambda: f.set_result(1))]


def s_set_exception_on_completed(F):
    """PyTorch installs the raising unwrap before refusing the second completion."""
    f = F.Future()
    f.set_result(3)
    return [_outcome(lambda: f.set_exception(ValueError("x"))), _outcome(f.wait)]


def s_callback_order(F):
    order = []
    f = F.Future()
    f.add_done_callback(lambda x: order.append("a"))
    c = f.then(lambda x: order.append("b") or x.value() * 2)
    f.add_done_callback(lambda x: order.append("c"))
    before = list(order)
    f.set_result(5)
    return [before, order, c.done(), c.wait()]


def s_inline_when_done(F):
    order = []
    f = F.Future()
    f.set_result(1)
    f.add_done_callback(lambda x: order.append(("adc", x is f)))
    c = f.then(lambda x: order.append("then") or "r")
    return [order, c.done(), c.wait()]


def s_callback_added_inside_callback(F):
    order = []
    f = F.Future()

    def cb(x):
        order.append(1)
        x.add_done_callback(lambda y: order.append("inner"))
    f.add_done_callback(cb)
    f.add_done_callback(lambda x: order.append(2))
    f.set_result(0)
    return order


def s_chain(F):
    f = F.Future()
    c = f.then(lambda x: x.wait() + 1).then(lambda x: x.wait() * 10)
    f.set_result(1)
    return [c.wait()]


def s_then_raises(F):
    f = F.Future()
    c = f.then(lambda x: 1 / 0)
    ok = c.then(lambda x: "ran")
    f.set_result(1)
    return [c.done(), _outcome(c.wait), _outcome(c.value), ok.wait()]


def s_then_on_failed(F):
    f = F.Future()
    c = f.then(lambda x: x.value())
    d = f.then(lambda x: "ignored the error")
    deep = c.then(lambda x: x.wait())
    f.set_exception(KeyError("k"))
    return [_outcome(c.wait), d.wait(), _outcome(deep.wait)]


def s_then_wrong_arity(F):
    f = F.Future()
    c = f.then(lambda: 1)
    f.set_result(0)
    return [_outcome(c.wait)]


def s_done_callback_raises(F):
    f = F.Future()
    seen = []
    f.add_done_callback(lambda x: 1 / 0)
    f.add_done_callback(lambda x: seen.append(x.value()))
    out = _outcome(lambda: f.set_result(7))
    return [out, seen, f.wait()]


def s_then_returns_future(F):
    inner = F.Future()
    f = F.Future()
    c = f.then(lambda x: inner)
    f.set_result(0)
    return [c.done(), c.wait() is inner]


def s_collect_all(F):
    a, b = F.Future(), F.Future()
    ca = F.collect_all([a, b])
    a.set_result(1)
    rec = [ca.done()]
    b.set_result(2)
    lst = ca.wait()
    return rec + [ca.done(), type(lst).__name__, [x.value() for x in lst],
                  F.collect_all([]).wait(), F.wait_all([a, b])]


def s_collect_all_set_exception(F):
    a, b = F.Future(), F.Future()
    ca = F.collect_all([a, b])
    a.set_exception(ValueError("boom"))
    rec = [ca.done()]
    b.set_exception(KeyError("second"))
    return rec + [ca.done(), _outcome(ca.wait), _outcome(lambda: F.wait_all([b, a]))]


def s_collect_all_failed_callback(F):
    p = F.Future()
    c = p.then(lambda x: 1 / 0)
    p.set_result(1)
    pending = F.Future()
    ca = F.collect_all([pending, c])
    return [ca.done(), _outcome(ca.wait), _outcome(lambda: F.wait_all([c]))]


def s_wait_all_errors(F):
    a, b = F.Future(), F.Future()
    a.set_result(1)
    b.set_exception(RuntimeError("rr"))
    return [_outcome(lambda: F.wait_all([a, b]))]


def s_bad_arguments(F):
    return [_outcome(lambda: F.collect_all([1]))[:2], _outcome(lambda: F.wait_all(5))[:2],
            _outcome(lambda: F.Future().then(5))[:2],
            _outcome(lambda: F.Future().add_done_callback(5))[:2],
            _outcome(lambda: F.Future(1))[:2],
            _outcome(lambda: F.Future(devices=["cpu"])),
            _outcome(lambda: F.Future(devices=["cpu:0"]).done()),
            _outcome(lambda: pickle.dumps(F.Future()))]


def s_set_from_thread(F):
    f = F.Future()
    t = threading.Thread(target=lambda: (time.sleep(0.05), f.set_result([1, 2])))
    t.start()
    out = f.wait()
    t.join()
    return [out]


SCENARIOS = [s_set_and_read, s_set_exception, s_set_exception_on_completed, s_callback_order,
             s_inline_when_done, s_callback_added_inside_callback, s_chain, s_then_raises,
             s_then_on_failed, s_then_wrong_arity, s_done_callback_raises,
             s_then_returns_future, s_collect_all, s_collect_all_set_exception,
             s_collect_all_failed_callback, s_wait_all_errors, s_bad_arguments,
             s_set_from_thread]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_futures_behave_as_pytorchs(scenario):
    assert scenario(ours) == scenario(theirs)


def test_torch_namespace_names_it():
    import dispatchtorch
    assert dispatchtorch.futures.Future is ours.Future and dispatchtorch.Future is ours.Future
    assert set(ours.__all__) == set(theirs.__all__)


def test_failed_callback_message_names_the_frame():
    f = ours.Future()
    c = f.then(lambda x: 1 / 0)
    f.set_result(0)
    with pytest.raises(RuntimeError) as e:
        c.wait()
    msg = str(e.value)
    assert "ZeroDivisionError: division by zero\n\nAt:\n" in msg and __file__ in msg
