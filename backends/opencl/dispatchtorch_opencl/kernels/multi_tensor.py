"""One launch for a whole parameter group: the fused optimizer rows' per-element
update over up to MAX_TENSORS contiguous tensors of one dtype (an MLP's six
parameters: six launches -> one; on PoCL each launch costs the host ~10-20 us and
wakes every worker thread).

Each tensor gets its own work-items (a few contiguous chunks, as codegen's loop
kernels split them); a work-item finds its tensor by its id against the tensors'
first work-items, takes that tensor's pointers and walks its chunk with the same
update body as the per-tensor kernel (optim.py), so the results are its bits.
"""
from __future__ import annotations

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, kernel_name, signature

I64 = np.int64
MAX_TENSORS = 8


def multi_spec(name, dt, names, consts, scalars, body, count, what):
    """A kernel over `count` tensors, each with operands `names` (pointers p_<name><t>,
    offsets o_<name><t>), its size mt_n<t>, chunk mt_c<t> and first work-item mt_w<t>;
    body(ix) gives the update of element ix (pointers named p_<name>)."""
    params = []
    for t in range(count):
        for v in names:
            params.append((T.pointer(dt, v in consts), f"p_{v}{t}", None))
            params.append(("long", f"o_{v}{t}", I64))
        params += [("long", f"mt_n{t}", I64), ("long", f"mt_c{t}", I64), ("long", f"mt_w{t}", I64)]
    params += list(scalars)
    sig, types = signature(params)
    lines = ["long wi = get_global_id(0);",
             *(f"{T.pointer(dt, v in consts)} p_{v};" for v in names),
             "long s, n, chunk;"]
    for t in range(count):
        test = "" if t == count - 1 else f"if (wi < mt_w{t + 1}) "
        sets = " ".join(f"p_{v} = p_{v}{t} + o_{v}{t};" for v in names)
        lines.append(f"{'' if t == 0 else 'else '}{test}{{ {sets} n = mt_n{t}; chunk = mt_c{t}; "
                     f"s = (wi - mt_w{t}) * chunk; }}")
    lines += ["long e = s + chunk; if (e > n) e = n;",
              "for (long j = s; j < e; j++) " + body({v: "j" for v in names})]
    kname = kernel_name(name, dt, count)
    src = (T.preamble((dt,)) + f"\n__kernel void {kname}({sig}) {{\n  " + "\n  ".join(lines)
           + "\n}\n")
    return KernelSpec(kname, src, types, what)


def groups(tensor_lists):
    """Runs of tensor indices whose every operand is contiguous, non-empty and of the
    first's dtype, at most MAX_TENSORS each; and the indices left for the per-tensor
    kernel. tensor_lists: per operand, the list of handles."""
    first = tensor_lists[0]
    runs, rest, run = [], [], []
    for i, p in enumerate(first):
        hs = [lst[i] for lst in tensor_lists]
        if p.size and all(h.contiguous and h.dtype == p.dtype for h in hs) \
                and (not run or first[run[0]].dtype == p.dtype):
            run.append(i)
            if len(run) == MAX_TENSORS:
                runs.append(run)
                run = []
        elif p.size:
            rest.append(i)
    if run:
        runs.append(run)
    return runs, rest


def launch(dev, key, make, tensor_lists, run, scalars):
    """The multi-tensor kernel over the tensors `run` of tensor_lists."""
    args, w = [], 0
    for i in run:
        n = tensor_lists[0][i].size
        items, chunk, _, _ = dev.split(n, per_item_cost=4)
        for lst in tensor_lists:
            args += [lst[i].buf, lst[i].offset]
        args += [n, chunk, w]
        w += items
    kernel, what = dev.kernel(key + (len(run),), lambda: make(len(run)))
    gsize, lsize = dev.one_per_item(w)
    dev.launch(kernel, gsize, lsize, args + list(scalars), what)
