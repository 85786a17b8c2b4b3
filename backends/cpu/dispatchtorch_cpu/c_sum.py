"""The full sum of a large contiguous float32/float64 array as one C loop on OpenMP threads.

numpy's pairwise sum reads 4M float32 in about 630 us on this VM; a C loop with 128
SIMD accumulators per block reads it as fast as a plain streaming read of the array,
220-260 us on one thread and 130-150 us on two, where PyTorch's sum takes 210-270 /
100-110 us (2026-12-03 probes). The
second thread must start in the same call: woken through parallel.py's pool (a Python
thread that needs the GIL) the two-thread sum took 188 us, with OpenMP 90-150 us.

The bits do not depend on the thread count: the array is cut into fixed blocks of
BLOCK elements; in a block each of LANES lanes adds ROWS terms in sequence, those
sums join the lane's total in sequence, the lanes' totals are added as a binary tree,
and the blocks' partials are added by numpy's pairwise loop in index order. Which
thread took a block changes nothing. Error over 48 adversarial float32 arrays: 0.72x
numpy's pairwise sum's (PyTorch's 2.14x); 64 lanes of 16 terms were 5-10% faster and
1.63x, so not kept. Without a C compiler (c_compiler.py) threaded.py's row sums run
instead: their bits differ from these in the last places, not their accuracy.

libgomp reads its wait policy once, when it loads. Its default spins a woken worker
for up to 300000 iterations after every region, holding the second core that
parallel.py's workers and BLAS need; unless the user chose (OMP_WAIT_POLICY or
GOMP_SPINCOUNT in the environment), the library is loaded with GOMP_SPINCOUNT=SPIN,
enough for back-to-back calls, and the variable is removed again right after.
libgomp's thread pool does not survive fork(): a forked child (a DataLoader worker)
whose parent had started a team would wait forever for workers it does not have, so
such a child sums on its own thread (PyTorch's forked workers do the same).
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from . import c_compiler

LANES = 128           # accumulators: 8 AVX-512 / 16 AVX2 registers of float32
ROWS = 8              # terms a lane adds in sequence before its sum joins the lane's total
BLOCK = 8192          # elements a block (float32); float64 blocks hold half as many
CHUNK_BLOCKS = 4      # blocks a thread takes at a time (dynamic schedule)
SPIN = "10000"

_SOURCE = """
#include <stddef.h>
#include <string.h>
#define CHUNK_BLOCKS {chunk}
{kernels}
"""
# A full block keeps its 128 float32 (64 float64) lanes in eight 64-byte vector
# variables: written as an array loop, gcc kept the lane totals on the stack and the loop
# read memory 25-35% slower than a plain streaming read (4M float32, one thread: 290-335
# against 245-270 us). The last, partial block runs the array loop; both orders are the
# same, so the bits are too.
_KERNEL = """
typedef {ctype} vec_{ctype} __attribute__((vector_size(64)));
#define VL_{ctype} (64 / (int)sizeof({ctype}))

static inline vec_{ctype} load_{ctype}(const {ctype} *p) {{
  vec_{ctype} v;
  memcpy(&v, p, 64);
  return v;
}}

static {ctype} full_block_{ctype}(const {ctype} *restrict p) {{
  const int vl = VL_{ctype};
  vec_{ctype} t0 = {{0}}, t1 = {{0}}, t2 = {{0}}, t3 = {{0}}, t4 = {{0}}, t5 = {{0}}, t6 = {{0}}, t7 = {{0}};
  for (long start = 0; start < {block}; start += {sub}) {{
    vec_{ctype} a0 = {{0}}, a1 = {{0}}, a2 = {{0}}, a3 = {{0}}, a4 = {{0}}, a5 = {{0}}, a6 = {{0}}, a7 = {{0}};
    for (int row = 0; row < {rows}; row++) {{
      const {ctype} *q = p + start + row * {lanes};
      a0 += load_{ctype}(q);          a1 += load_{ctype}(q + vl);
      a2 += load_{ctype}(q + 2 * vl); a3 += load_{ctype}(q + 3 * vl);
      a4 += load_{ctype}(q + 4 * vl); a5 += load_{ctype}(q + 5 * vl);
      a6 += load_{ctype}(q + 6 * vl); a7 += load_{ctype}(q + 7 * vl);
    }}
    t0 += a0; t1 += a1; t2 += a2; t3 += a3; t4 += a4; t5 += a5; t6 += a6; t7 += a7;
  }}
  t0 += t4; t1 += t5; t2 += t6; t3 += t7;   /* the lane tree's top levels, a vector each */
  t0 += t2; t1 += t3;
  t0 += t1;
  {ctype} t[VL_{ctype}];
  memcpy(t, &t0, 64);
  for (int half = vl / 2; half > 0; half /= 2)
    for (int l = 0; l < half; l++) t[l] += t[l + half];
  return t[0];
}}

static {ctype} partial_block_{ctype}(const {ctype} *restrict p, long m) {{
  {ctype} total[{lanes}], acc[{lanes}];
  for (int l = 0; l < {lanes}; l++) total[l] = 0;
  for (long start = 0; start < m; start += {sub}) {{
    long end = start + {sub} < m ? start + {sub} : m, j = start;
    for (int l = 0; l < {lanes}; l++) acc[l] = 0;
    for (; j + {lanes} <= end; j += {lanes})
      for (int l = 0; l < {lanes}; l++) acc[l] += p[j + l];
    for (int l = 0; j < end; j++, l++) acc[l] += p[j];
    for (int l = 0; l < {lanes}; l++) total[l] += acc[l];
  }}
  for (int half = {lanes} / 2; half > 0; half /= 2)
    for (int l = 0; l < half; l++) total[l] += total[l + half];
  return total[0];
}}

void sum_{ctype}(const {ctype} *restrict x, long n, {ctype} *restrict partials, int threads) {{
  long nblocks = (n + {block} - 1) / {block};
  #pragma omp parallel for schedule(dynamic, CHUNK_BLOCKS) num_threads(threads) if(threads > 1)
  for (long b = 0; b < nblocks; b++) {{
    long m = n - b * {block};
    partials[b] = m >= {block} ? full_block_{ctype}(x + b * {block})
                               : partial_block_{ctype}(x + b * {block}, m);
  }}
}}
"""
# (float32, float64): elements a block, lanes; float64 lanes are half as many a register
_SHAPES = {np.dtype(np.float32): ("float", BLOCK, LANES),
           np.dtype(np.float64): ("double", BLOCK // 2, LANES // 2)}

# full_block_* holds a block's lanes in eight 64-byte vectors
assert all(lanes * d.itemsize == 8 * 64 for d, (_, _, lanes) in _SHAPES.items())

_kernels = None       # dtype -> (ctypes function, block); {} without a compiler
_loading = threading.Lock()      # one load: the environment is changed around it
_team = {"started": False, "lost": False}   # lost: forked after a team started


def _after_fork_in_child():
    _team["lost"] = _team["started"]


os.register_at_fork(after_in_child=_after_fork_in_child)


def source():
    """The C source of both kernels (shown by tests and by compile's explain)."""
    return _SOURCE.format(chunk=CHUNK_BLOCKS, kernels="".join(
        _KERNEL.format(ctype=c, block=b, lanes=l, rows=ROWS, sub=l * ROWS) for c, b, l in _SHAPES.values()))


def _load():
    with _loading:
        return _kernels if _kernels is not None else _load_once()


def _load_once():
    global _kernels
    user_chose = "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ
    if not user_chose:
        os.environ["GOMP_SPINCOUNT"] = SPIN
    try:
        lib = c_compiler.load(source(), openmp=True)
    finally:
        if not user_chose:
            del os.environ["GOMP_SPINCOUNT"]
    found = {}
    if lib is not None:
        for dtype, (ctype, block, _) in _SHAPES.items():
            fn = getattr(lib, f"sum_{ctype}")
            fn.argtypes = (ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_int)
            fn.restype = None
            found[dtype] = (fn, block)
    _kernels = found
    return found


def available(dtype):
    """Whether this process sums dtype here (a compiler was found, dtype is a float)."""
    return (_kernels if _kernels is not None else _load()).get(dtype) is not None


def blocks(x):
    """An empty array for the per-block sums of x (available(x.dtype) must hold)."""
    return np.empty(-(-x.size // _kernels[x.dtype][1]), x.dtype)


def sum_blocks(x, partials, threads):
    """partials = the per-block sums of contiguous 1-D x, on `threads` OpenMP threads
    (the same bits on any number)."""
    if threads > 1:
        if _team["lost"]:
            threads = 1
        else:
            _team["started"] = True
    _kernels[x.dtype][0](x.ctypes.data, x.size, partials.ctypes.data, threads)
