"""Symbolic dims: integers that depend on the sizes of dynamic input axes.

An exported graph records the sizes seen at trace time. A size that follows a dynamic
axis (the batch, say) is kept as a `SymInt`: a polynomial in the axes' symbols, each
symbol of degree at most one per term (B, 64*B, B*T + 1 ...), plus the value it had
at trace time (its `hint`). It is found by tracing at several sizes and fitting the
integers that changed (`fit`), so the capture itself needs no symbolic machinery.
"""
from __future__ import annotations

import itertools
from fractions import Fraction


class SymInt:
    """sum(coeff * prod(symbols)) over `terms` ({(): c, ("batch",): 64, ...})."""

    __slots__ = ("terms", "hint")

    def __init__(self, terms, hint):
        self.terms = {tuple(sorted(m)): int(c) for m, c in terms.items() if c}
        self.hint = int(hint)

    @property
    def symbols(self):
        return sorted({s for m in self.terms for s in m})

    def evaluate(self, env):
        """The value for the symbol values in env ({name: int})."""
        total = 0
        for mono, c in self.terms.items():
            v = c
            for s in mono:
                v *= env[s]
            total += v
        return total

    def __int__(self):
        return self.hint

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, SymInt) and self.terms == other.terms

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items())))

    def __repr__(self):
        parts = []
        for mono, c in sorted(self.terms.items(), key=lambda t: (-len(t[0]), t[0])):
            name = "*".join(mono)
            parts.append(str(c) if not mono else name if c == 1 else f"{c}*{name}")
        return " + ".join(parts) or "0"

    # exact arithmetic: the view and shape computations of the exporter use these
    def __add__(self, other):
        t = dict(self.terms)
        for m, c in _terms(other).items():
            t[m] = t.get(m, 0) + c
        return _simplify(t, self.hint + int(other))

    __radd__ = __add__

    def __neg__(self):
        return SymInt({m: -c for m, c in self.terms.items()}, -self.hint)

    def __sub__(self, other):
        return self + (-as_sym(other))

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        t: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in _terms(other).items():
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return _simplify(t, self.hint * int(other))

    __rmul__ = __mul__

    def __floordiv__(self, other):
        """Exact division by an int or a single term; ValueError otherwise."""
        return sym_div(self, other)

    def __rfloordiv__(self, other):
        return sym_div(other, self)

    def to_data(self):
        return {"sym": [[list(m), c] for m, c in sorted(self.terms.items())], "hint": self.hint}

    @classmethod
    def from_data(cls, data):
        return cls({tuple(m): c for m, c in data["sym"]}, data["hint"])


def _terms(x):
    return x.terms if isinstance(x, SymInt) else ({(): int(x)} if x else {})


def _simplify(terms, hint):
    terms = {m: c for m, c in terms.items() if c}
    if not terms or set(terms) == {()}:
        return terms.get((), 0)
    return SymInt(terms, hint)


def as_sym(x):
    return x if isinstance(x, SymInt) else SymInt({(): int(x)}, int(x))


def sym_div(a, b):
    """a / b where it divides exactly term by term (B*C*H*W / (C*H*W) = B)."""
    ta, tb = _terms(a), _terms(b)
    if not isinstance(a, SymInt) and not isinstance(b, SymInt):
        if b == 0 or a % b:
            raise ValueError(f"{a} is not a multiple of {b}")
        return a // b
    if len(tb) != 1:
        raise ValueError(f"cannot divide {a!r} by {b!r} exactly")
    (mb, cb), = tb.items()
    out = {}
    for m, c in ta.items():
        rest = list(m)
        for s in mb:
            if s not in rest:
                raise ValueError(f"cannot divide {a!r} by {b!r} exactly")
            rest.remove(s)
        if c % cb:
            raise ValueError(f"cannot divide {a!r} by {b!r} exactly")
        out[tuple(rest)] = out.get(tuple(rest), 0) + c // cb
    return _simplify(out, int(a) // int(b) if int(b) else 0)


def is_symbolic(x):
    return isinstance(x, SymInt)


def concrete(x, env=None):
    """x with every SymInt replaced by its value (its hint when env is None), through
    tuples, lists and dicts."""
    if isinstance(x, SymInt):
        return x.hint if env is None else x.evaluate(env)
    if isinstance(x, tuple):
        return tuple(concrete(v, env) for v in x)
    if isinstance(x, list):
        return [concrete(v, env) for v in x]
    if isinstance(x, dict):
        return {k: concrete(v, env) for k, v in x.items()}
    return x


def sample_points(base):
    """The symbol values to trace at: every corner of base + {0, 1} per symbol (2**k
    traces for k symbols; the first is base itself), enough to fit a multilinear term,
    then one more point (base + 3 everywhere) that checks the fit."""
    names = sorted(base)
    corners = [dict(zip(names, (base[n] + d for n, d in zip(names, corner))))
               for corner in itertools.product((0, 1), repeat=len(names))]
    return corners + [{n: base[n] + 3 for n in names}]


def fit(values, points, what):
    """The SymInt taking values[i] at points[i] (the points of sample_points), or the
    plain int when all agree. Raises ValueError naming `what` when no integer
    multilinear polynomial fits (a size that is not a product/sum of the dims)."""
    if all(v == values[0] for v in values):
        return values[0]
    *values, check = values
    *points, check_point = points
    names = sorted(points[0])
    base = points[0]
    # Moebius inversion over the corners: the coefficient of each monomial in the
    # shifted variables u_s = s - base_s, then expanded back into the symbols.
    shifted = {}
    for mask in itertools.product((0, 1), repeat=len(names)):
        coeff = 0
        for sub in itertools.product((0, 1), repeat=len(names)):
            if any(s > m for s, m in zip(sub, mask)):
                continue
            idx = _corner_index(sub, points, names, base)
            sign = (-1) ** (sum(mask) - sum(sub))
            coeff += sign * values[idx]
        if coeff:
            shifted[tuple(n for n, m in zip(names, mask) if m)] = coeff
    terms: dict = {}
    for mono, c in shifted.items():
        # prod over s in mono of (s - base_s): expand
        for keep in itertools.product((0, 1), repeat=len(mono)):
            sub = tuple(s for s, k in zip(mono, keep) if k)
            factor = Fraction(c)
            for s, k in zip(mono, keep):
                if not k:
                    factor *= -base[s]
            terms[sub] = terms.get(sub, 0) + factor
    if any(f.denominator != 1 for f in terms.values()):
        raise ValueError(f"{what} is not an integer polynomial of the dynamic dims")
    r = SymInt({m: int(f) for m, f in terms.items()}, values[0])
    if r.evaluate(check_point) != check:
        raise ValueError(f"{what} changes with the dynamic dims in a way export cannot "
                         f"express (values {values + [check]} at {points + [check_point]})")
    return r


def _corner_index(sub, points, names, base):
    want = {n: base[n] + d for n, d in zip(names, sub)}
    for i, p in enumerate(points):
        if p == want:
            return i
    raise AssertionError("corner missing")
