"""The fused-kernel hook of the CPU reference: a region runs tile by tile.

Measured on 4M float32 (a 5-op chain with exp and tanh): numexpr 0.4-1.2x eager
(its float32 transcendentals are slower than numpy's SIMD loops; with numpy's exp and
numexpr for the arithmetic around it, 1.6x slower than the tiles), tiled numpy
3.1-3.5x. So a fused region runs this backend's own kernels on tiles of 128K elements
whose temporaries stay in cache, the tiles shared among the backend's pool threads
(parallel.POOL, one thread: no pool at all): one pass over memory instead of one per
op, and the same numbers as the unfused prims (elementwise kernels are pointwise).
An output's last ops run in the output's own tile (_borrowers).
"""
from __future__ import annotations

from math import prod

import numpy as np

from . import c_fusion
from .kernels import KERNELS
from .parallel import POOL
from .where_bits import BITS as _BITS, select as _where_select, zero_a as _where_zero_a, \
    zero_b as _where_zero_b

# elements per tile. On the 5-op chain over 4M float32 (one thread, thread CPU time, a
# loaded 2-core EPYC, 1 MiB L2 per core): 32K 6.0-6.4 ms, 64K 5.7-6.0, 128K 5.4-6.0,
# 256K 5.5-5.6. Smaller tiles keep a tile's five arrays in L2, but each tile restarts
# the input streams and adds ~8 Python-level calls; the operations after the exp read
# their inputs from L2 or L3 at about the same speed.
TILE = 131072

_ELEMENTWISE = frozenset(
    {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
     "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
     "erfinv", "floor", "ceil", "round", "trunc", "neg", "abs", "bitwise_not", "add", "sub",
     "mul", "div", "fmod", "pow", "maximum", "minimum", "atan2", "bitwise_and", "bitwise_or",
     "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt",
     "ge", "where", "relu", "cast", "sum", "amax", "amin"})
_REDUCTIONS = frozenset({"sum", "amax", "amin"})
# ops whose arithmetic, not memory traffic, bounds a tile's time (see _borrowers)
_COMPUTE_BOUND = frozenset(
    {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
     "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
     "erfinv", "pow", "atan2", "fmod"})


def can_fuse(op, dtype):
    return op in _ELEMENTWISE


def _cast(out, x):
    np.copyto(out, x, casting="unsafe")


def _is_plus_zero(arg, consts, j):
    kind, v = arg
    return kind == "const" and not any(np.asarray(consts[(j, v)]).tobytes())


def _where_kernel(j, o, consts, region):
    """The bit-select kernel for ops[j], a where, or None (other dtypes, a non-bool
    condition: the where kernel)."""
    def dtype(arg):
        kind, v = arg
        return region.inputs[v] if kind == "in" else region.ops[v].dtype if kind == "tmp" \
            else None
    it = _BITS.get(o.dtype)
    cond, a, b = o.args
    if it is None or o.in_dtype != o.dtype or dtype(cond) != "bool" or \
            any(dtype(x) not in (None, o.dtype) for x in (a, b)):
        return None
    if _is_plus_zero(a, consts, j):
        return _where_zero_a(it)
    if _is_plus_zero(b, consts, j):
        return _where_zero_b(it)
    return _where_select(it)


def _last_uses(ops):
    """{op: index of the last op reading its result}"""
    return {v: j for j, o in enumerate(ops) for kind, v in o.args if kind == "tmp"}


def _slots(ops, out_of, last, borrow):
    """Scratch tile buffers for the results written neither to an output nor to a
    borrowed output tile: one per live result, reused after its last use (an op then
    writes over its own operand, elementwise in place). -> (slot of op, slot dtypes)"""
    slot_of, free, slot_dtype = {}, {}, []
    for j, o in enumerate(ops):
        for kind, v in o.args:
            if kind == "tmp" and last.get(v) == j and v in slot_of:
                free.setdefault(ops[v].dtype, []).append(slot_of[v])
        if j not in out_of and j not in borrow:
            pool = free.get(o.dtype)
            if pool:
                slot_of[j] = pool.pop()
            else:
                slot_of[j] = len(slot_dtype)
                slot_dtype.append(o.dtype)
    return slot_of, slot_dtype


def _borrowers(ops, outputs, last):
    """{op: output op} for the temporaries computed in their output's tile.

    The chain of single-use results that feeds an output op (t2 = exp(t1), t3 = t2 * x,
    out = t3 - y) is computed in place in the output's tile from its latest compute-bound
    op (exp) on: that op writes the output's cache lines first, and its arithmetic hides
    their read from memory (the store's read-for-ownership) that the first write costs,
    where a cheap op would wait for it; the later ops then work in cache on the output
    itself (one tile buffer less). On 4M float32 `exp(x*y+z)*x - y`, one thread: the
    output's first write by the final subtract (before), by the first multiply, or by the
    exp: 6.1-6.4, 5.9-6.3 and 5.8-6.0 ms. Only without reductions in the region (whose
    results have other shapes), and only when the output is C-contiguous (a strided
    view would slow three ops instead of one) and shares no memory with an input
    (checked per call)."""
    if any(o.op in _REDUCTIONS for o in ops):
        return {}
    outs = set(outputs)
    borrow = {}
    for k in outputs:
        chain, j = [], k
        while True:
            prev = [v for kind, v in ops[j].args if kind == "tmp" and last.get(v) == j
                    and v not in outs and v not in borrow and ops[v].dtype == ops[k].dtype]
            if not prev or ops[prev[0]].op == "cast":
                break
            j = prev[0]
            chain.append(j)
        costly = [i for i, j in enumerate(chain) if ops[j].op in _COMPUTE_BOUND]
        if costly:
            for j in chain[:costly[0] + 1]:
                borrow[j] = k
    return borrow


def _may_share(a, b):
    return np.may_share_memory(a, b)


def _split_axis(shape):
    """The axis tiles cut (every later axis stays whole in a tile)."""
    k = 0
    while k < len(shape) - 1 and prod(shape[k + 1:]) > TILE:
        k += 1
    return k


def _tiles(shape):
    """Index tuples covering `shape` in C order, each about TILE elements."""
    if not shape:
        yield ()
        return
    k = _split_axis(shape)
    inner = prod(shape[k + 1:]) or 1
    step = max(1, TILE // inner)
    for lead in np.ndindex(*shape[:k]):
        for s in range(0, shape[k], step):
            yield lead + (slice(s, min(s + step, shape[k])),)


def fuse_elementwise(region, dtypes):
    """A kernel(*outs, *ins) for a FusedRegion; dtypes maps dtype names to numpy."""
    ops = region.ops
    n_out = len(region.outputs)
    out_of = {j: i for i, j in enumerate(region.outputs)}
    last = _last_uses(ops)
    borrow = _borrowers(ops, region.outputs, last)
    consts = {}
    for j, o in enumerate(ops):
        for kind, v in o.args:
            if kind == "const":
                consts[(j, v)] = np.asarray(v).astype(dtypes[o.in_dtype])
    kernels = [_cast if o.op == "cast" else
               (o.op == "where" and _where_kernel(j, o, consts, region)) or KERNELS[o.op]
               for j, o in enumerate(ops)]
    shape = tuple(region.shape)
    # a reduction runs per tile when the tiles keep its dims whole (cut before them)
    k = _split_axis(shape) if shape else 0
    whole_only = any(o.op in _REDUCTIONS and min(dict(o.params)["dims"]) <= k for o in ops)
    kw = [dict(o.params) for o in ops]
    tile_kw = [dict(p, dims=tuple(d - k for d in p["dims"])) if "dims" in p else p for p in kw]
    probe = np.empty(shape, np.bool_)
    tiles = [(t, probe[t].shape) for t in _tiles(shape)] if not whole_only else \
        [((), shape)]
    full = tiles[0][1] if tiles else ()
    tiles = [(t, () if ts == full else tuple(slice(0, n) for n in ts)) for t, ts in tiles]
    del probe

    def tile_loop(borrow):
        slot_of, slot_dtype = _slots(ops, out_of, last, borrow)
        return _tile_loop(ops, kernels, consts, out_of, borrow, slot_of, slot_dtype, dtypes,
                          full, len(region.inputs), tile_kw)
    run = plain = tile_loop({})
    if borrow:
        run = tile_loop(borrow)
        lent = sorted({out_of[k] for k in borrow.values()})

    whole = len(tiles) == 1

    single = _straight_line(ops, kernels, consts, out_of, dtypes, shape, len(region.inputs), kw)

    by_threads = {}

    def kernel(*handles):
        if 0 in shape:
            return
        outs, ins = handles[:n_out], handles[n_out:]
        if whole:
            return single(outs, ins)
        go = run
        if borrow and not all(outs[m].flags.c_contiguous and
                              not any(_may_share(outs[m], i) for i in ins) for m in lent):
            go = plain      # an output written in place holds an input, or is strided
        n = min(POOL.threads, len(tiles) // 2)
        if n <= 1:
            return go(outs, ins, tiles)
        # about four chunks a thread, taken in turn by the workers and this thread (the
        # backend's work-sharing pool): a thread descheduled on a loaded machine leaves
        # its share to the others
        chunks = by_threads.get(n)
        if chunks is None:
            step = max(1, len(tiles) // (4 * n))
            chunks = by_threads[n] = [tiles[i:i + step] for i in range(0, len(tiles), step)]
        POOL.run(len(chunks), lambda i: go(outs, ins, chunks[i]))
    kernel.source = describe(region, kernels)
    native = c_fusion.kernel_for(region, kernel)
    if native is not None:
        native.source = f"/* cpu generated C (c_fusion.py); other layouts run the tiles:\n" \
                        f"{kernel.source} */\n{native.source}"
        return native
    return kernel


def describe(region, kernels=()):
    """The tile program as text (what explain shows)."""
    lines = [f"# cpu tiled numpy: {len(region.ops)} ops over {list(region.shape)}, tiles of "
             f"{TILE} elements over {POOL.threads} threads; inputs {', '.join(f'in{i}: {d}' for i, d in enumerate(region.inputs))}"]
    borrow = _borrowers(region.ops, region.outputs, _last_uses(region.ops))
    if borrow:
        lines.append("# (in outK's tile: where outK is C-contiguous and shares no memory "
                     "with an input, else in a scratch tile)")
    for j, o in enumerate(region.ops):
        args = ", ".join(f"in{v}" if k == "in" else f"t{v}" if k == "tmp" else repr(v)
                         for k, v in o.args)
        mark = f"  -> out{region.outputs.index(j)}" if j in region.outputs else \
            f"  (in out{region.outputs.index(borrow[j])}'s tile)" if j in borrow else ""
        extra = "".join(f", {k}={v!r}" for k, v in o.params)
        how = getattr(kernels[j], "text", None) if kernels else None
        lines.append(f"t{j}: {o.dtype} = {o.op}({args}{extra}){mark}" + (f"  # {how}" if how else ""))
    return "\n".join(lines)


# ops whose kernel is the ufunc itself outside float16/bfloat16 (kernels.py's _unary /
# _binary): a tile calls the ufunc directly, without the kernel's size and dtype tests
_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "exp": np.exp,
           "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
           "neg": np.negative, "abs": np.abs}
_HALF = frozenset({"float16", "bfloat16"})


def _operands(j, o, consts, env, inputs):
    """The generated names of op j's operands; its constants are bound into env."""
    def constant(v, k):
        env[f"c{j}_{k}"] = consts[(j, v)]
        return f"c{j}_{k}"
    return o.operand_names(constant, inputs)


def _tile_loop(ops, kernels, consts, out_of, borrow, slot_of, slot_dtype, dtypes, full, n_in,
               kw):
    """run(outs, ins, tiles): the region over a list of tiles as generated Python, one
    line per op and tile (no per-op interpretation: the GIL is held for less of each
    tile, which the worker threads share). A ufunc's out is passed by position (the
    keyword costs a little per call)."""
    env = {"empty": np.empty, "full": full}
    lines = ["def run(outs, ins, tiles):"]
    for k, d in enumerate(slot_dtype):
        env[f"D{k}"] = dtypes[d]
        lines.append(f"    B{k} = empty(full, D{k})")
    if out_of:
        lines.append("    " + "".join(f"o{k}, " for k in range(len(out_of))) + "= outs")
    if n_in:
        lines.append("    " + "".join(f"i{k}, " for k in range(n_in)) + "= ins")
    lines.append("    for t, part in tiles:")
    for k in range(len(slot_dtype)):
        lines.append(f"        S{k} = B{k}[part] if part else B{k}")
    used = sorted({v for o in ops for kind, v in o.args if kind == "in"})
    for v in used:
        lines.append(f"        x{v} = i{v}[t]")
    for m in sorted({out_of[k] for k in borrow.values()}):
        lines.append(f"        w{m} = o{m}[t]")
    for j, o in enumerate(ops):
        args = _operands(j, o, consts, env, "x")
        if j in borrow:
            dst = f"w{out_of[borrow[j]]}"
        elif j in out_of:
            m = out_of[j]
            dst = f"w{m}" if m in {out_of[k] for k in borrow.values()} else f"o{m}[t]"
        else:
            dst = f"S{slot_of[j]}"
        lines.append(f"        t{j} = {dst}")
        uf = _UFUNCS.get(o.op)
        if uf is not None and not kw[j] and o.dtype not in _HALF and o.in_dtype not in _HALF:
            env[f"U{j}"] = uf
            lines.append(f"        U{j}({', '.join(args)}, t{j})")
            continue
        env[f"K{j}"] = kernels[j]
        if kw[j]:
            env[f"P{j}"] = kw[j]
            args.append(f"**P{j}")
        lines.append(f"        K{j}(t{j}, {', '.join(args)})")
    exec("\n".join(lines), env)     # noqa: S102  (source built from op indices only)
    return env["run"]


def _straight_line(ops, kernels, consts, out_of, dtypes, shape, n_in, kw):
    """The region in one tile as generated straight-line Python (small tensors: no
    per-op interpretation left, only the kernel calls)."""
    env = {"empty": np.empty, "shape": shape}
    lines = ["def single(outs, ins):"]
    if out_of:
        lines.append("    " + "".join(f"o{k}, " for k in range(len(out_of))) + "= outs")
    if n_in:
        lines.append("    " + "".join(f"i{k}, " for k in range(n_in)) + "= ins")
    for j, o in enumerate(ops):
        env[f"K{j}"] = kernels[j]
        args = _operands(j, o, consts, env, "i")
        if j in out_of:
            lines.append(f"    t{j} = o{out_of[j]}")
        else:
            env[f"D{j}"] = dtypes[o.dtype]
            lines.append(f"    t{j} = empty(shape, D{j})")
        if kw[j]:
            env[f"P{j}"] = kw[j]
            args.append(f"**P{j}")
        lines.append(f"    K{j}(t{j}, {', '.join(args)})")
    exec("\n".join(lines), env)     # noqa: S102  (source built from op indices only)
    return env["single"]


def fuse_epilogue(kernels, op, epilogue, dtype):
    """linear + relu as one call (dispatchtorch/_compile/epilogue.py): the GEMM writes
    the output, the bias add and the ReLU then run in place on it while it is in cache
    (no second buffer, no pass into cold memory); the backend's own two kernels, so
    the numbers are eager's."""
    if (op, epilogue) != ("linear", "relu") or dtype not in ("float32", "float64"):
        return None
    linear, relu = kernels["linear"], kernels["relu"]

    def kernel(out, x, weight, bias):
        linear(out, x, weight, bias)
        relu(out, out)
    kernel.text = "cpu: x @ w.T (BLAS) + bias, then relu in place on the GEMM's output"
    return kernel
