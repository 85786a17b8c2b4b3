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


def _primes(start):
    n = max(start, 2)
    while True:
        if all(n % d for d in range(2, int(n ** 0.5) + 1)):
            yield n
        n += 1


LEVELS = 3      # sizes per symbol: fits up to degree 2 in each (B*T*T for attention scores)


def sample_points(ranges, avoid=(), examples=None):
    """The sizes to trace at for symbols {name: (min, max or None)}: a grid of LEVELS
    sizes per symbol (LEVELS**k traces for k symbols, enough to fit a polynomial of
    degree LEVELS - 1 in each) and a check point. The sizes are distinct primes not in
    `avoid` (the static sizes of the inputs and weights), so that no dynamic size
    equals another size by chance (equal sizes share cached constants); preferred are
    primes between 5 and the example size (examples: {name: size}), which the model
    is known to accept, then the example, then larger primes."""
    names = sorted(ranges)
    used = set(avoid)
    chosen = {}
    examples = examples or {}
    # the symbol with the largest example first: it has the most room below it
    for name in sorted(names, key=lambda n: -examples.get(n, 4)):
        lo, hi = ranges[name]
        lo = max(lo, 2)
        top = examples.get(name, 4)
        if hi is not None:
            top = min(top, hi)
        # primes from 5 up to the example, the example, other sizes up to it, primes
        # above it, then the smallest sizes (the likeliest to equal a scalar constant)
        below = [n for n in range(top, max(lo, 5) - 1, -1)]
        order = [n for n in below if _is_prime(n)] + [top] + \
            [n for n in below if not _is_prime(n)]
        for n in _primes(max(top + 1, lo)):
            if (hi is not None and n > hi) or len(order) > 96:
                break
            order.append(n)
        order += [n for n in range(min(top, 4), lo - 1, -1)]
        order = [n for n in dict.fromkeys(order) if lo <= n and (hi is None or n <= hi)]
        picks = [n for n in order if n not in used][:LEVELS + 1]
        if len(picks) <= LEVELS:
            raise ValueError(f"export: dynamic dim {name} has too small a range "
                             f"[{lo}, {hi}] to trace it at {LEVELS + 1} sizes")
        used.update(picks)
        chosen[name] = picks
    grid = [dict(zip(names, (chosen[n][c] for n, c in zip(names, corner))))
            for corner in itertools.product(range(LEVELS), repeat=len(names))]
    return grid + [{n: chosen[n][LEVELS] for n in names}]


def _is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def fit(values, points, what):
    """The SymInt taking values[i] at points[i] (the points of sample_points), or the
    plain int when all agree. Raises ValueError naming `what` when no polynomial with
    integer coefficients fits (a size that is not built from the dims by + and *)."""
    if all(v == values[0] for v in values):
        return values[0]
    *values, check = values
    *points, check_point = points
    names = sorted(points[0])
    nodes = {n: sorted({p[n] for p in points}) for n in names}
    # Lagrange interpolation on the grid: sum of value * prod over symbols of the basis
    # polynomial that is 1 at the point's size and 0 at the symbol's other sizes
    terms: dict = {}
    for value, point in zip(values, points):
        poly = {(): Fraction(value)}
        for n in names:
            for other in nodes[n]:
                if other != point[n]:
                    span = point[n] - other
                    poly = _mul(poly, {(n,): Fraction(1, span), (): Fraction(-other, span)})
        for m, c in poly.items():
            terms[m] = terms.get(m, 0) + c
    if any(f.denominator != 1 for f in terms.values()):
        raise ValueError(f"{what} is not an integer polynomial of the dynamic dims")
    r = _simplify({m: int(f) for m, f in terms.items()}, values[0])
    if not isinstance(r, SymInt) or r.evaluate(check_point) != check:
        raise ValueError(f"{what} changes with the dynamic dims in a way export cannot "
                         f"express (values {values + [check]} at {points + [check_point]})")
    return r


def _mul(a, b):
    out: dict = {}
    for m1, c1 in a.items():
        for m2, c2 in b.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0) + c1 * c2
    return out
