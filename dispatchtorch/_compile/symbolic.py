"""Symbolic sizes for compile(dynamic=...): an int that remembers how it was computed.

A dynamic capture gives each dynamic input dim a SymInt: a real int (the program
runs for real, with the sizes it was called with) carrying `code`, a Python
expression over the symbols (`s[0]*s[1]`). Arithmetic with ints keeps the code, so
the shapes, strides, offsets and parameters the tracer records say how they follow
from the inputs' sizes. Every comparison the program makes on a symbolic size
(`n == 1` in broadcasting, `a == b`, `n > 3` in Python control flow) is recorded in
the ShapeEnv as a guard, the relation the graph relied on. Anything that leaves the
int world (float(), true division, a float operand, int()) specialises: the symbol
is pinned to its value by a guard. Outside its own capture a SymInt is a plain int.
"""
from __future__ import annotations

import threading

_TLS = threading.local()


def active():
    """The ShapeEnv of this thread's dynamic capture, or None."""
    return getattr(_TLS, "env", None)


class ShapeEnv:
    """The symbols of one dynamic capture and the guards on them.

    sources[i]: (input name, dim) that symbol s[i] was read from; values[i]: its
    value at capture; guards: {python condition over s: None}, in the order made."""

    def __init__(self):
        self.sources = []
        self.values = []
        self.guards = {}
        self.const_codes = {}          # constant value id -> code (a size made a scalar)
        self.bounds = []               # the guards comparing a size with a number

    def symbol(self, value, source):
        i = len(self.values)
        self.sources.append(source)
        self.values.append(int(value))
        return SymInt(value, f"s[{i}]", self)

    def guard(self, cond, holds):
        self.guards.setdefault(cond if holds else f"not ({cond})", None)

    def specialise(self, x):
        self.guard(f"{x.code} == {int.__int__(x)}", True)

    def __enter__(self):
        self._prev = active()
        _TLS.env = self
        return self

    def __exit__(self, *exc):
        _TLS.env = self._prev
        return False

    def checker(self):
        """fn(s) -> whether every guard holds for sizes s (one compiled expression)."""
        body = " and ".join(f"({g})" for g in self.guards) or "True"
        return eval(f"lambda s: {body}")          # noqa: S307 - our own expressions


def code_of(x, env):
    """x's expression in env's symbols (a plain int: its literal), None for a non-int."""
    if type(x) is SymInt and x.env is env:
        return x.code
    if isinstance(x, int) and not isinstance(x, bool):
        return repr(int.__int__(x))
    return None


def _mine(x):
    env = active()
    return env if env is not None and x.env is env else None


def _asking(x):
    """x's env when a comparison or a pin on x is the program's: not inside a call the
    tracer runs nested (a random fill's host draw and copy, a check's host read: what
    they decide is not replayed, the graph redraws or re-reads)."""
    env = _mine(x)
    if env is None:
        return None
    from .._capture.tracer import current
    tr = current()
    return None if tr is not None and tr.depth else env


_IDENTITY = {"__mul__": "1", "__rmul__": "1", "__add__": "0", "__radd__": "0", "__sub__": "0",
             "__floordiv__": "1"}


def _arith(name, sym, reflected=False):
    base = getattr(int, name)

    def op(self, other):
        r = base(self, other)
        env = _mine(self)
        if env is None:
            return r
        oc = code_of(other, env)
        if oc is None or type(r) is not int:      # a float operand or result: pinned
            if r is NotImplemented and isinstance(other, float):
                env.specialise(self)
                return getattr(float, name)(float(int.__int__(self)), other)
            if r is not NotImplemented:
                env.specialise(self)
                if type(other) is SymInt and other.env is env:
                    env.specialise(other)
            return r
        if oc == _IDENTITY.get(name):         # x*1, x+0, x//1: x (shorter guards)
            return self
        left, right = (oc, self.code) if reflected else (self.code, oc)
        return SymInt(r, f"({left}{sym}{right})", env)
    op.__name__ = name
    return op


def _compare(name, sym):
    base = getattr(int, name)

    def op(self, other):
        r = base(self, other)
        env = _asking(self)
        if env is None or r is NotImplemented:
            if r is NotImplemented and env is not None and isinstance(other, float):
                env.specialise(self)
            return r
        oc = code_of(other, env)
        if oc is None:
            env.specialise(self)
        elif oc != self.code:
            env.guard(f"{self.code} {sym} {oc}", r)
            if sym in ("<", "<=", ">", ">=") and oc.lstrip("-").isdigit():
                env.bounds.append(f"{self.code} {sym} {oc}")
        return r
    op.__name__ = name
    return op


class SymInt(int):
    """An int with the expression that computed it (see the module docstring)."""

    def __new__(cls, value, code, env):
        o = int.__new__(cls, value)
        o.code = code
        o.env = env
        return o

    def __hash__(self):
        # not int's: a cache keyed on sizes (strides of a shape) must not answer a
        # symbolic key with a plain-int entry, nor one capture's key with another's
        return hash((int.__int__(self), self.code, id(self.env)))

    def __repr__(self):
        return int.__repr__(self)

    __str__ = __repr__

    for _n, _s in (("__add__", "+"), ("__sub__", "-"), ("__mul__", "*"), ("__floordiv__", "//"),
                   ("__mod__", "%")):
        locals()[_n] = _arith(_n, _s)
        _r = "__r" + _n[2:]
        locals()[_r] = _arith(_r, _s, reflected=True)
    for _n, _s in (("__eq__", "=="), ("__ne__", "!="), ("__lt__", "<"), ("__le__", "<="),
                   ("__gt__", ">"), ("__ge__", ">=")):
        locals()[_n] = _compare(_n, _s)
    del _n, _s, _r

    def _pinned(name):
        base = getattr(int, name)

        def op(self, *a):
            env = _asking(self)
            if env is not None:
                env.specialise(self)
                for x in a:
                    if type(x) is SymInt and x.env is env:
                        env.specialise(x)
            return base(self, *a)
        op.__name__ = name
        return op

    for _n in ("__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__float__", "__int__",
               "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__divmod__",
               "__round__", "__invert__"):
        locals()[_n] = _pinned(_n)
    del _n, _pinned

    def __neg__(self):
        env = _mine(self)
        return SymInt(-int.__int__(self), f"(-{self.code})", env) if env else int.__neg__(self)

    def __pos__(self):
        return self

    def __abs__(self):
        env = _mine(self)
        if env is None:
            return int.__abs__(self)
        env.guard(f"{self.code} >= 0", int.__int__(self) >= 0)
        return self if self >= 0 else -self

    def __bool__(self):
        env = _mine(self)
        r = int.__int__(self) != 0
        if env is not None:
            env.guard(f"{self.code} != 0", r)
        return r


def plain(x):
    """x with every SymInt inside (tuples, lists, dicts) made a plain int."""
    if type(x) is SymInt:
        return int.__int__(x)
    if type(x) is tuple:
        return tuple(plain(v) for v in x)
    if type(x) is list:
        return [plain(v) for v in x]
    if type(x) is dict:
        return {k: plain(v) for k, v in x.items()}
    return x


_RANGE = range


class _RangeType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _RANGE)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _RANGE)


class GuardedRange(metaclass=_RangeType):
    """builtins.range while a dynamic capture runs: a loop over a symbolic size
    (`for t in range(n)`) pins n (Python's range reads an int subclass as a plain int,
    so the loop would be unrolled at the captured n without a guard); the range made
    is the real one (isinstance(r, range) still holds)."""

    def __new__(cls, *args):
        for a in args:
            if type(a) is SymInt:
                env = _asking(a)
                if env is not None:
                    env.specialise(a)
        return _RANGE(*args)
