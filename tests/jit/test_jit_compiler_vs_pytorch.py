"""torch.jit's eager corner and torch.compiler against PyTorch: the decorators return
what eager PyTorch returns, the predicates answer alike, TorchScript's entry points
refuse by name, and the compiler's questions are answered by the capture."""
from __future__ import annotations

import typing
from typing import Dict, List, Optional, Tuple

import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", [dt, torch], ids=["ours", "torch"])
def test_decorators_return_the_function_tagged(lib):
    j = lib.jit

    class M(lib.nn.Module):
        @j.unused
        def a(self, x):
            return x + 1

        @j.ignore
        def b(self, x):
            return x + 2

        @j.export
        def c(self, x):
            return x + 3

        @j.ignore(drop=False)
        def d(self, x):
            return x + 4

        @property
        @j.unused
        def p(self):
            return 5

    m = M()
    assert (m.a(1), m.b(1), m.c(1), m.d(1), m.p) == (2, 3, 4, 5, 5)
    assert M.a._torchscript_modifier.startswith("unused")
    assert M.b._torchscript_modifier.startswith("ignore")
    assert M.c._torchscript_modifier.startswith("export")
    assert M.d._torchscript_modifier.startswith("ignore")
    with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
        f = j.ignore(True)(lambda x: x)
    assert f._torchscript_modifier.startswith("unused")
    with pytest.raises(RuntimeError, match="must be a bool or a function but got 3"):
        j.ignore(3)
    assert j.is_scripting() is False and j.is_tracing() is False
    assert j.annotate(List[int], [1]) == [1]
    assert j.Final is typing.Final
    a = j.Attribute(3, int)
    assert (a.value, a.type) == (3, int) and a == (3, int)
    assert j.script_if_tracing(lambda x: x * 2)(4) == 8


def test_modifier_strings_match():
    for name in ("unused", "ignore", "export"):
        mine = getattr(dt.jit, name)(lambda: 0)._torchscript_modifier
        theirs = getattr(torch.jit, name)(lambda: 0)._torchscript_modifier
        assert mine == theirs


class _Iface:
    def forward(self, x: int) -> int:
        pass


def test_interface_returns_the_class():
    for lib in (dt, torch):
        with pytest.warns(DeprecationWarning, match="torch.jit.interface` is deprecated"):
            assert lib.jit.interface(_Iface) is _Iface

    class Base:
        pass

    class Derived(Base):
        pass
    for lib in (dt, torch):
        with pytest.raises(RuntimeError, match="does not support inheritance"), \
                pytest.warns(DeprecationWarning):
            lib.jit.interface(Derived)


ISINSTANCE = [
    (3, int), (3, float), ([1, 2], List[int]), ([1, "a"], List[int]), ({"a": 1}, Dict[str, int]),
    ({"a": [1]}, Dict[str, List[int]]), ({1: 1}, Dict[str, int]), ((1, "a"), Tuple[int, str]),
    ((1, 2), Tuple[int]), (None, Optional[int]), (3, Optional[int]), ("a", Optional[int]),
    ([[1.0]], List[List[float]]), (3, (str, int)), ([1], list[int]), (1, int | None),
]


@pytest.mark.parametrize("obj,t", ISINSTANCE, ids=[str(i) for i in range(len(ISINSTANCE))])
def test_isinstance_agrees(obj, t):
    assert dt.jit.isinstance(obj, t) is torch.jit.isinstance(obj, t)


def test_isinstance_errors_agree():
    for t in (list, Dict, Optional):
        msgs = []
        for lib in (dt, torch):
            with pytest.raises(RuntimeError) as info:
                lib.jit.isinstance([1], t)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
    with pytest.warns(UserWarning, match="inner type of a container is lost"):
        assert dt.jit.isinstance([], List[int])


@pytest.mark.parametrize("name", ["script", "trace", "save", "load", "freeze", "trace_module",
                                  "optimize_for_inference"])
def test_torchscript_entry_points_refuse_by_name(name):
    with pytest.raises(NotImplementedError, match=rf"torch\.jit\.{name} is not supported"):
        getattr(dt.jit, name)(dt.nn.Linear(2, 2))


def test_script_classes_refuse_and_isinstance_is_false():
    assert not isinstance(dt.nn.Linear(2, 2), dt.jit.ScriptModule)
    with pytest.raises(NotImplementedError, match="ScriptModule"):
        dt.jit.ScriptModule()
    assert dt.jit.Error.__mro__[1:] == torch.jit.Error.__mro__[1:] == (Exception, BaseException, object)
    for lib in (dt, torch):
        with pytest.warns(UserWarning, match="Only works in script mode"):
            with lib.jit.strict_fusion():
                pass


def test_compiler_questions_inside_and_outside_a_capture():
    c = dt.compiler
    assert (c.is_compiling(), c.is_dynamo_compiling(), c.is_exporting()) == (False,) * 3
    assert (torch.compiler.is_compiling(), torch.compiler.is_exporting()) == (False, False)
    seen = []

    @dt.compile
    def f(x):
        seen.append((c.is_compiling(), c.is_dynamo_compiling(), c.is_exporting()))
        return x * 2
    for _ in range(3):
        assert f(dt.ones(2)).tolist() == [2.0, 2.0]
    assert seen == [(True, True, False)]        # Python runs at the capture only

    class M(dt.nn.Module):
        def forward(self, x):
            seen.append((c.is_compiling(), c.is_exporting()))
            return x + 1
    dt.export.export(M(), (dt.ones(2),))
    assert seen[1:] == [(True, True)]
    assert c.is_exporting() is False


def test_disable_breaks_the_graph_and_runs_eagerly():
    calls = []

    @dt.compiler.disable
    def side(x):
        calls.append(1)
        return x + 1

    @dt.compile
    def f(x):
        return side(x) * 3
    for _ in range(3):
        assert f(dt.ones(2)).tolist() == [6.0, 6.0]
    assert len(calls) == 3                      # eager every call: the graph broke
    out = dt._dynamo.explain(f)(dt.ones(2))
    assert out.graph_break_count == 1 and "torch.compiler.disable" in out.break_reasons[0].reason
    with pytest.raises(NotImplementedError, match="recursive=False"):
        dt.compiler.disable(side, recursive=False)
    assert side(dt.zeros(1)).tolist() == [1.0]  # outside a capture: a plain call

    seen = []
    g = dt.compile(lambda x: seen.append(1) or x * 2)
    eager_g = dt.compiler.disable(g)            # a compiled function: its function, eagerly
    for _ in range(2):
        assert eager_g(dt.ones(1)).tolist() == [2.0]
    assert len(seen) == 2


def test_markers_and_backends():
    def g(x):
        return x
    assert dt.compiler.allow_in_graph(g) is g and torch.compiler.allow_in_graph(g) is g
    assert dt.compiler.assume_constant_result(g) is g
    assert dt.compiler.cudagraph_mark_step_begin() is None
    assert dt.compiler.list_backends() == ["inductor"]
    assert set(dt.compiler.list_backends(exclude_tags=())) <= set(
        torch.compiler.list_backends(exclude_tags=()))
    assert dt.compiler.compile is dt.compile
    dt.compiler.reset()


def test_dynamo_graph_break_and_aliases():
    calls = []

    @dt.compile
    def f(x):
        calls.append(1)
        y = x * 2
        dt._dynamo.graph_break()
        return y + 1
    for _ in range(2):
        assert f(dt.ones(2)).tolist() == [3.0, 3.0]
    assert len(calls) == 2                      # broken: eager on every call
    dt._dynamo.graph_break()                    # outside a capture: nothing
    torch._dynamo.graph_break()
    assert dt._dynamo.disable is dt.compiler.disable
    assert dt._dynamo.is_compiling() is False is torch._dynamo.is_compiling()


def test_disable_a_child_module_keeps_the_rest_compiled():
    class Child(dt.nn.Module):
        def forward(self, x):
            return x + 1

    class Net(dt.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = dt.nn.Linear(2, 2)
            self.b = dt.compiler.disable(Child())

        def forward(self, x):
            return self.b(self.a(x))
    net = Net()
    x = dt.ones(1, 2)
    eager = net(x)
    out = dt.compile(net)(x)
    assert out.tolist() == eager.tolist()
