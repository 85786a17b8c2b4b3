"""torch.profiler on the dispatcher: counts of the ops a known program runs, nesting of
record_function ranges and decompositions, schedule steps against PyTorch's, the table's
columns, the Chrome trace, and that nothing stays installed after a profile."""
from __future__ import annotations

import gzip
import json
import os
import warnings
from collections import Counter

import pytest

import dispatchtorch as dt
from dispatchtorch.dispatch import OPS

P = dt.profiler


def _counts(prof):
    return Counter(e.name for e in prof.events())


def test_counts_of_a_known_program():
    x, w = dt.ones(4, 3), dt.ones(2, 3)
    with P.profile(activities=[P.ProfilerActivity.CPU]) as prof:
        y = x * 2                       # mul
        z = y + y                       # add
        for _ in range(3):
            z = z.relu()                # relu x3
        z.sum()                         # sum
        z.view(12)                      # a view: no kernel, nothing recorded
        dt.nn.functional.linear(x, w)   # linear (the CPU backend's own kernel)
    assert _counts(prof) == {"aten::mul": 1, "aten::add": 1, "aten::relu": 3, "aten::sum": 1,
                             "aten::linear": 1}
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["aten::relu"].count == 3
    assert avg["aten::relu"].cpu_time_total == pytest.approx(
        sum(e.cpu_time_total for e in prof.events() if e.name == "aten::relu"))


def test_fills_and_copies_are_recorded():
    x = dt.ones(3)
    with P.profile(record_shapes=True) as prof:
        dt.zeros(2, 2)                  # fill_
        x.clone()                       # copy_
        x.double()                      # copy_ (a converting copy)
        x + dt.ones(3, dtype=dt.float64)   # fill_, then copy_ (promotion) and add
        x.view(3, 1)                    # a view: nothing
    assert [e.name for e in prof.events()] == ["aten::fill_", "aten::copy_", "aten::copy_",
                                               "aten::fill_", "aten::copy_", "aten::add"]
    assert prof.events()[0].input_shapes == [[2, 2], []]


def test_backward_ops_are_recorded():
    w = dt.ones(3, requires_grad=True)
    with P.profile() as prof:
        (w * 3).sum().backward()
    # forward mul and sum; backward's seed gradient (a fill of ones), sum's backward
    # expands it (a view), mul's multiplies by 3
    ev = "autograd::engine::evaluate_function: "
    assert _counts(prof) == {"aten::mul": 2, "aten::sum": 1, "aten::fill_": 1,
                             ev + "SumBackward0": 1, ev + "MulBackward0": 1}
    node = next(e for e in prof.events() if e.name == ev + "MulBackward0")
    assert [c.name for c in node.cpu_children] == ["aten::mul"]      # as PyTorch nests it


def test_record_function_nesting_and_decorator():
    @P.record_function("decorated")
    def f(x):
        return x + 1

    x = dt.ones(3)
    with P.profile() as prof:
        with P.record_function("outer"):
            with P.record_function("inner"):
                x * 2
            f(x)
        dt.square(x)                    # a composite: its decomposition's mul nests in it
    ev = {e.name: e for e in prof.events()}
    outer, inner, dec, sq = ev["outer"], ev["inner"], ev["decorated"], ev["aten::square"]
    assert outer.cpu_parent is None and [c.name for c in outer.cpu_children] == ["inner",
                                                                                 "decorated"]
    assert [c.name for c in inner.cpu_children] == ["aten::mul"]
    assert [c.name for c in dec.cpu_children] == ["aten::add"]
    assert [c.name for c in sq.cpu_children] == ["aten::mul"] and sq.cpu_parent is None
    for parent in (outer, inner, dec, sq):
        for c in parent.cpu_children:
            assert parent.time_range.start <= c.time_range.start <= c.time_range.end \
                <= parent.time_range.end
        assert parent.self_cpu_time_total == pytest.approx(
            parent.cpu_time_total - sum(c.cpu_time_total for c in parent.cpu_children))
    assert outer.is_user_annotation and not sq.is_user_annotation


def test_recursive_decorated_function_nests():
    @P.record_function("fact")
    def fact(n, x):
        return x if n == 0 else fact(n - 1, x * 2)

    with P.profile() as prof:
        fact(2, dt.ones(1))
    facts = [e for e in prof.events() if e.name == "fact"]
    assert len(facts) == 3
    assert facts[1].cpu_parent is facts[0] and facts[2].cpu_parent is facts[1]
    assert [c.name for c in facts[0].cpu_children] == ["aten::mul", "fact"]


def test_nothing_recorded_or_installed_outside_a_profile():
    with P.record_function("alone"):
        dt.ones(2) + 1
    with P.profile() as prof:
        assert any(hasattr(k, "_dt_profiled") for k in OPS["add"].kernels.values())
    _nothing_installed()
    assert list(prof.events()) == []
    with P.profile():
        with pytest.raises(RuntimeError, match="another profiler is already recording"):
            with P.profile():
                pass


def test_shapes_and_grouping():
    with P.profile(record_shapes=True) as prof:
        dt.ones(2, 3) + dt.ones(2, 3)
        dt.ones(4) + dt.ones(4)
        dt.ones(4) + dt.ones(4)
    adds = [e for e in prof.events() if e.name == "aten::add"]
    assert [e.input_shapes for e in adds] == [[[2, 3], [2, 3]], [[4], [4]], [[4], [4]]]
    grouped = {(a.key, str(a.input_shapes)): a.count
               for a in prof.key_averages(group_by_input_shape=True)}
    assert grouped[("aten::add", "[[2, 3], [2, 3]]")] == 1
    assert grouped[("aten::add", "[[4], [4]]")] == 2
    assert {a.key: a.count for a in prof.key_averages()}["aten::add"] == 3


def test_table_columns_as_pytorch():
    torch = pytest.importorskip("torch")
    tables = []
    for lib in (dt, torch):
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                                  record_shapes=True) as prof:
            with lib.profiler.record_function("block"):
                lib.ones(3) * 2
        tables.append(prof.key_averages(group_by_input_shape=True).table(
            sort_by="cpu_time_total", row_limit=5))
        assert "Input Shapes" not in prof.key_averages().table()
    heads = [t.splitlines()[1].split("  ") for t in tables]
    heads = [[h.strip() for h in hs if h.strip()] for hs in heads]
    assert heads[0] == heads[1] == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                    "CPU time avg", "# of Calls", "Input Shapes"]
    ours = tables[0].splitlines()
    assert ours[-1].startswith("Self CPU time total: ")
    assert ours[3].split()[0] == "block" and ours[3].split()[3] == "100.00%"


def test_row_limit_and_sort():
    with P.profile() as prof:
        for _ in range(3):
            dt.ones(3) * 2
        dt.ones(3) + 1
    rows = prof.key_averages().table(sort_by="count", row_limit=1).splitlines()
    assert len(rows) == 6 and rows[3].split()[0] == "aten::fill_"     # 4 ones: 4 fills
    assert prof.key_averages().table(sort_by="cuda_time_total")      # zeros: the order kept
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        prof.key_averages().table(sort_by="bogus")


def _schedule_trace(lib, sched_kwargs, steps):
    """(step_num at each on_trace_ready, the sizes of the adds recorded in that trace)."""
    out = []

    def ready(p):
        out.append((p.step_num, sorted(e.input_shapes[0][0] for e in p.events()
                                       if e.name == "aten::add")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                                  record_shapes=True,
                                  schedule=lib.profiler.schedule(**sched_kwargs),
                                  on_trace_ready=ready) as prof:
            for i in range(steps):
                lib.ones(i + 1) + 1
                prof.step()
    return out


SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1, repeat=3),
             dict(skip_first=2, wait=1, warmup=1, active=2, repeat=2),
             dict(wait=2, warmup=1, active=3, repeat=1),
             dict(skip_first=3, wait=4, warmup=0, active=1, skip_first_wait=1)]


@pytest.mark.parametrize("kwargs", SCHEDULES, ids=[str(i) for i in range(len(SCHEDULES))])
def test_schedule_records_the_steps_pytorch_records(kwargs):
    torch = pytest.importorskip("torch")
    ours = _schedule_trace(dt, kwargs, 13)
    assert ours == _schedule_trace(torch, kwargs, 13)
    assert ours         # the schedule recorded something: the comparison means something


def test_schedule_function_matches():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in SCHEDULES:
            a, b = P.schedule(**kw), torch.profiler.schedule(**kw)
            assert [a(i).name for i in range(30)] == [b(i).name for i in range(30)]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        P.schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        P.schedule(wait=1, warmup=0, active=1)


def test_step_ranges_are_named_and_aggregate():
    traces = []
    with P.profile(schedule=P.schedule(wait=0, warmup=1, active=3),
                   on_trace_ready=lambda p: traces.append(p.events())) as prof:
        for _ in range(4):
            dt.ones(2) * 2
            prof.step()
    assert len(traces) == 1
    steps = [e for e in traces[0] if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#1", "ProfilerStep#2",
                                             "ProfilerStep#3"]
    assert all([c.name for c in e.cpu_children] == ["aten::fill_", "aten::mul"] for e in steps)


def test_chrome_trace(tmp_path):
    with P.profile(record_shapes=True) as prof:
        with P.record_function("block"):
            dt.ones(2, 2) @ dt.ones(2, 2)
    for name in ("trace.json", "trace.json.gz"):
        path = tmp_path / name
        prof.export_chrome_trace(str(path))
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt") as f:
            data = json.load(f)
        xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
        names = [e["name"] for e in xs]
        assert names == ["block", "aten::fill_", "aten::fill_", "aten::matmul"]   # ones, ones, @
        block = xs[0]
        assert block["cat"] == "user_annotation"
        assert all(e["cat"] == "cpu_op" for e in xs[1:])
        for e in xs[1:]:
            assert block["ts"] <= e["ts"] and e["ts"] + e["dur"] <= block["ts"] + block["dur"] + 1e-3
            assert e["pid"] == os.getpid()
        mm = next(e for e in xs if e["name"] == "aten::matmul")
        assert mm["args"]["Input Dims"] == [[2, 2], [2, 2]]


def test_metadata_and_stacks(tmp_path):
    with P.profile(with_stack=True) as prof:
        for _ in range(50):
            dt.ones(64, 64) @ dt.ones(64, 64)
    prof.add_metadata("run", 7)
    prof.add_metadata_json("cfg", '{"lr": 0.1}')
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    data = json.load(open(tmp_path / "t.json"))
    assert data["run"] == "7" and data["cfg"] == {"lr": 0.1}
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = open(tmp_path / "stacks.txt").read().splitlines()
    assert lines and all(int(line.rsplit(" ", 1)[1]) > 0 for line in lines)
    assert "test_metadata_and_stacks" in lines[0]


def test_tensorboard_trace_handler(tmp_path):
    d = tmp_path / "tb"
    with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1, repeat=2),
                   on_trace_ready=P.tensorboard_trace_handler(str(d), worker_name="w")) as prof:
        for _ in range(5):
            dt.ones(2) + 1
            prof.step()
    files = sorted(os.listdir(d))
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json")
                                   for f in files)
    for f in files:
        assert any(e.get("name") == "aten::add" for e in json.load(open(d / f))["traceEvents"])


def test_with_stack_names_the_user_line():
    with P.profile(with_stack=True) as prof:
        dt.ones(2) * 3
    mul = next(e for e in prof.events() if e.name == "aten::mul")
    assert __file__ in mul.stack[0] and "test_with_stack_names_the_user_line" in mul.stack[0]
    assert "Source Location" in prof.key_averages(group_by_stack_n=1).table()


def test_refused_options_and_device_activities():
    with pytest.raises(NotImplementedError, match="profile_memory"):
        P.profile(profile_memory=True)
    with pytest.raises(NotImplementedError, match="with_flops"):
        P.profile(with_flops=True)
    with pytest.warns(UserWarning, match=r"\['CUDA'\] are not recorded"):
        with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA]) as prof:
            dt.ones(2) + 1
    assert _counts(prof)["aten::add"] == 1
    assert P.supported_activities() == {P.ProfilerActivity.CPU}


def test_autograd_profiler_aliases():
    ap = dt.autograd.profiler
    with ap.profile(record_shapes=True) as prof:
        with ap.record_function("r"):
            dt.ones(3) + 1
    assert {a.key: a.count for a in prof.key_averages()} == {"r": 1, "aten::fill_": 1,
                                                             "aten::add": 1}
    assert "aten::add" in prof.table() and prof.function_events[0].name == "r"
    with ap.profile(enabled=False) as off:
        dt.ones(1)
    assert not hasattr(off, "function_events") or off.function_events is None


def _nothing_installed():
    from dispatchtorch.autograd import engine
    from dispatchtorch.dispatch.loader import loaded_backends
    assert not hasattr(engine._Run._apply, "_dt_profiled")
    for op in OPS.values():
        assert not any(hasattr(k, "_dt_profiled") for k in op.kernels.values()), op.name
        assert not hasattr(op.decomp, "_dt_profiled"), op.name
    for rt in loaded_backends():
        assert not any(hasattr(k, "_dt_profiled") for k in rt.kernels.values()), rt.name
        if rt.backend is not None:
            assert "copy_" not in vars(rt.backend) and "fill_" not in vars(rt.backend)


def test_compiled_function_under_the_profiler():
    f = dt.compile(lambda x: (x * 2).sin() + dt.ones(3).double())
    x = dt.ones(3)
    with P.profile() as prof:
        y = f(x)                         # the capture runs the function eagerly: recorded
        f(x)
    assert y.tolist() == pytest.approx([1.9092974] * 3)
    assert _counts(prof)["aten::mul"] >= 1 and _counts(prof)["aten::copy_"] >= 1
    _nothing_installed()
    assert f(x).tolist() == y.tolist()
