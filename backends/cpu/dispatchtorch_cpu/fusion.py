"""The fused-kernel hook of the CPU reference: a region runs tile by tile.

Measured on 4M float32 (a 5-op chain with exp and tanh): numexpr 0.4-1.2x eager
(its float32 transcendentals are slower than numpy's SIMD loops), tiled numpy
3.1-3.5x. So a fused region runs this backend's own kernels on tiles of 128K
elements whose temporaries stay in cache, the tiles shared among worker threads:
one pass over memory instead of one per op, and the same numbers as the unfused
prims (elementwise kernels are pointwise).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from math import prod

import numpy as np

from .kernels import KERNELS

# elements per tile: a float32 temporary (512 KB) stays in a core's L2 while the inputs
# stream. On the 5-op chain over 4M float32 (one thread, CPU time, a loaded 2-core
# EPYC): 32K 7.6 ms, 64K 6.7-6.9, 128K 6.2-6.4, 256K 6.0-6.1, 512K 6.3-6.9
TILE = 131072
# worker threads over the tiles (numpy's loops release the GIL); CPUBackend.set_num_threads
# sets it, and OMP_NUM_THREADS where given
THREADS = [int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or os.cpu_count() or 1]
_POOL: list = []


def _pool():
    n = THREADS[0]
    if not _POOL or _POOL[0][0] != n:
        if _POOL:
            _POOL.pop()[1].shutdown(wait=False)
        _POOL.append((n, ThreadPoolExecutor(n, thread_name_prefix="dispatchtorch-fused")))
    return _POOL[0][1]

_ELEMENTWISE = frozenset(
    {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
     "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
     "erfinv", "floor", "ceil", "round", "trunc", "neg", "abs", "bitwise_not", "add", "sub",
     "mul", "div", "fmod", "pow", "maximum", "minimum", "atan2", "bitwise_and", "bitwise_or",
     "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt",
     "ge", "where", "relu", "cast", "sum", "amax", "amin"})
_REDUCTIONS = frozenset({"sum", "amax", "amin"})


def can_fuse(op, dtype):
    return op in _ELEMENTWISE


def _cast(out, x):
    np.copyto(out, x, casting="unsafe")


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
    kernels = [_cast if o.op == "cast" else KERNELS[o.op] for o in ops]
    last = {}
    for j, o in enumerate(ops):
        for kind, v in o.args:
            if kind == "tmp":
                last[v] = j
    # temporaries: a tile buffer per live non-output result, reused after its last use
    slot_of, free, n_slots, slot_dtype = {}, {}, 0, []
    for j, o in enumerate(ops):
        for kind, v in o.args:
            if kind == "tmp" and last.get(v) == j and v in slot_of:
                free.setdefault(ops[v].dtype, []).append(slot_of[v])
        if j not in out_of:
            pool = free.get(o.dtype)
            if pool:
                slot_of[j] = pool.pop()
            else:
                slot_of[j] = n_slots
                slot_dtype.append(o.dtype)
                n_slots += 1
    consts = {}
    for j, o in enumerate(ops):
        for kind, v in o.args:
            if kind == "const":
                consts[(j, v)] = np.asarray(v).astype(dtypes[o.in_dtype])
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

    run = _tile_loop(ops, kernels, consts, out_of, slot_of, slot_dtype, dtypes, full,
                     len(region.inputs), tile_kw)

    whole = len(tiles) == 1

    single = _straight_line(ops, kernels, consts, out_of, dtypes, shape, len(region.inputs), kw)

    by_threads = {}

    def kernel(*handles):
        if 0 in shape:
            return
        outs, ins = handles[:n_out], handles[n_out:]
        if whole:
            return single(outs, ins)
        n = min(THREADS[0], len(tiles) // 2)
        if n <= 1:
            return run(outs, ins, tiles)
        # about four chunks a thread, taken in turn by the workers and this thread: on a
        # loaded machine a thread that is descheduled leaves its share to the others
        chunks = by_threads.get(n)
        if chunks is None:
            step = max(1, len(tiles) // (4 * n))
            chunks = by_threads[n] = [tiles[i:i + step] for i in range(0, len(tiles), step)]
        todo = iter(chunks)

        def work():
            for c in todo:          # (a list iterator's next is atomic under the GIL)
                run(outs, ins, c)
        parts = [_pool().submit(work) for _ in range(n - 1)]
        work()
        for f in parts:
            f.result()
    kernel.source = describe(region)
    return kernel


def describe(region):
    """The tile program as text (what explain shows)."""
    lines = [f"# cpu tiled numpy: {len(region.ops)} ops over {list(region.shape)}, tiles of "
             f"{TILE} elements over {THREADS[0]} threads; inputs {', '.join(f'in{i}: {d}' for i, d in enumerate(region.inputs))}"]
    for j, o in enumerate(region.ops):
        args = ", ".join(f"in{v}" if k == "in" else f"t{v}" if k == "tmp" else repr(v)
                         for k, v in o.args)
        mark = f"  -> out{region.outputs.index(j)}" if j in region.outputs else ""
        extra = "".join(f", {k}={v!r}" for k, v in o.params)
        lines.append(f"t{j}: {o.dtype} = {o.op}({args}{extra}){mark}")
    return "\n".join(lines)


# ops whose kernel is the ufunc itself outside float16/bfloat16 (kernels.py's _unary /
# _binary): a tile calls the ufunc directly, without the kernel's size and dtype tests
_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "exp": np.exp,
           "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
           "neg": np.negative, "abs": np.abs}
_HALF = frozenset({"float16", "bfloat16"})


def _operands(j, o, consts, env, inputs):
    """The generated names of op j's operands: inputs (`inputs` + index), earlier results
    (t + index) and constants (bound into env)."""
    args = []
    for kind, v in o.args:
        if kind == "in":
            args.append(f"{inputs}{v}")
        elif kind == "tmp":
            args.append(f"t{v}")
        else:
            name = f"c{j}_{len(args)}"
            env[name] = consts[(j, v)]
            args.append(name)
    return args


def _tile_loop(ops, kernels, consts, out_of, slot_of, slot_dtype, dtypes, full, n_in, kw):
    """run(outs, ins, tiles): the region over a list of tiles as generated Python, one
    line per op and tile (no per-op interpretation: the GIL is held for less of each
    tile, which the worker threads share)."""
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
    for j, o in enumerate(ops):
        args = _operands(j, o, consts, env, "x")
        dst = f"o{out_of[j]}[t]" if j in out_of else f"S{slot_of[j]}"
        lines.append(f"        t{j} = {dst}")
        uf = _UFUNCS.get(o.op)
        if uf is not None and not kw[j] and o.dtype not in _HALF and o.in_dtype not in _HALF:
            env[f"U{j}"] = uf
            lines.append(f"        U{j}({', '.join(args)}, out=t{j})")
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
