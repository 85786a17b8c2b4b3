"""Multi-threaded forms of the elementwise, reduction and matmul kernels for large
arrays (parallel.py's pool): the single-threaded kernel called on chunks. The
kernels in kernels.py test their size inline and come here only at THRESHOLD
elements or more, so a small tensor pays one comparison and no extra call.

Why threads over chunks rather than numexpr: these are single ufunc calls, which
numpy already runs at memory speed and with the GIL released, so cutting them up is
all that is missing; numexpr would add a string-compiled VM (and a dependency) to
get the same single pass. Chunks also keep the results bit-identical to numpy's for
elementwise ops (reductions add per-chunk partial sums).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from . import c_sum
from . import parallel as P
from .blas_sums import _ones
from .blas_threads import BLAS
from .timed_choice import TimedChoice

_ndarray = np.ndarray
_LOWP = frozenset({np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)})


PIECE_MAX = 1 << 20    # elements: the longest chunk of an elementwise op
PIECE_MIN = 1 << 16    # elements: the shortest (erf switches method on short arrays)


def chunked(kernel, out, inputs):
    """kernel(out, *inputs) on chunks of out and of the inputs (all of out's shape;
    otherwise, or when the pool has one thread, one call). C-contiguous operands are cut
    as flat arrays, so that a (4, 1024, 1024) tensor gets as many chunks as a flat one.
    Equal chunks, two a thread (a multiple of the threads), of at most PIECE_MAX
    elements: each chunk costs a GIL hand-over and, on this VM, often a thread wake-up,
    so fewer chunks beat finer balance. 4M float32 `a + b` against PyTorch's 2 threads,
    alternating in one process: 4 equal chunks 0.87x, 2 chunks 0.88x, 3 chunks 1.11x,
    the 20 guided (shrinking) chunks of before 1.17x; through the frontend, 11 runs
    under load, 0.85x (0.64-1.26) against 1.08x (0.76-1.48) (docs/performance.md,
    "bigops"). A descheduled worker still holds up at most one chunk."""
    threads = P.POOL.threads
    if threads == 1 or out.size < P.THRESHOLD \
            or any(type(x) is _ndarray and x.shape != out.shape for x in inputs):
        return kernel(out, *inputs)
    if out.ndim != 1 and out.flags.c_contiguous \
            and all(type(x) is not _ndarray or x.flags.c_contiguous for x in inputs):
        out = out.reshape(-1)
        inputs = tuple(x.reshape(-1) if type(x) is _ndarray else x for x in inputs)
    cut = P.split_axis(out.shape, out.size)
    if cut is None:
        return kernel(out, *inputs)
    axis = cut[0]
    length = out.shape[axis]
    parts = max(2 * threads, -(-out.size // PIECE_MAX))
    parts = min(-(-parts // threads) * threads, max(1, out.size // PIECE_MIN), length)
    idx = P.blocks(axis, P.bounds(length, parts))

    def part(i):
        s = idx[i]
        kernel(out[s], *(x[s] if type(x) is _ndarray else x for x in inputs))
    P.POOL.run(parts, part)


def elementwise(kernel):
    """kernel(out, *inputs) with its large-array form (for kernels without the inline
    size test)."""
    def threaded(out, *inputs):
        if out.size < P.THRESHOLD:
            return kernel(out, *inputs)
        return chunked(kernel, out, inputs)
    threaded.__wrapped__ = kernel
    return threaded


ROW = 1024           # columns of the blocked full reduction


def _full_by_columns(out, x, reduce):
    """A full max/min of a large contiguous float array (sums: _full_sum_by_rows): each
    chunk of CHUNK elements viewed as rows of ROW and reduced down the columns (SIMD
    across a row), then the columns and the chunks' partials."""
    flat = x.reshape(-1)
    whole = flat.size - flat.size % P.CHUNK
    n = whole // P.CHUNK
    partial = np.empty(n + 1, out.dtype)

    def part(i):
        a = i * P.CHUNK
        partial[i] = reduce(reduce(flat[a:a + P.CHUNK].reshape(-1, ROW), axis=0))
    P.POOL.run(n, part)
    tail = flat[whole:]
    if tail.size:
        partial[n] = reduce(tail)
        out[...] = reduce(partial)
    else:
        out[...] = reduce(partial[:n])


SUM_ROW = 128          # terms per row sum (below)
_SUM_ALIGN = 16        # rows: pool tasks start on multiples of this (same bits, below)
GEMV_MAX_BYTES = 4 << 20   # arrays up to this size sum their rows by gemv, larger by einsum
SUM_CHOICE = TimedChoice()
_einsum = np.einsum
_matmul = np.matmul


def _gemv_rows(matrix, rows):
    _matmul(matrix, _ones(matrix.dtype, SUM_ROW), out=rows)


def _einsum_rows(matrix, rows):
    _einsum("ij->i", matrix, out=rows)


def _row_sums_one(kernel, matrix, rows):
    kernel(matrix, rows)


def _row_sums_pool(kernel, matrix, rows):
    nrows = rows.shape[0]
    step = -(-nrows // P.POOL.threads // _SUM_ALIGN) * _SUM_ALIGN
    starts = range(0, nrows, step)

    def part(i):
        a = starts[i]
        kernel(matrix[a:a + step], rows[a:a + step])
    P.POOL.run(len(starts), part)


def _full_sum_by_rows(out, x):
    """A full sum of a large contiguous float32/float64 array: rows of SUM_ROW summed
    with SIMD accumulators along each row, then the row sums with numpy's pairwise add.
    Error over 48 adversarial float32 arrays, against numpy's pairwise sum's: 0.97x for
    the rows summed by BLAS gemv (`rows @ ones`), 1.04x by einsum (`ij->i`); PyTorch's
    own sum 2.02x (this AMD VM; rows of 256 1.18x, 512 1.7-4x).
    Which loop sums the rows depends on the array's size only (GEMV_MAX_BYTES): gemv
    computes faster while the array is in cache, einsum streams one from memory faster
    on this VM's OpenBLAS (SkylakeX kernels on AMD EPYC). One thread, float32: 256K
    elements gemv 16.7 us, einsum 24.2 us (PyTorch 14.4); 1M 75 / 89 us (52.5); 4M
    433 / 346 us (465); float64 2M 1315 / 513 us (476); 4M cycling through four
    arrays 1200 / 617 us (710). In the harness at default threads (4M float32), four
    alternating pairs: gemv 1.80-4.58x PyTorch's time, einsum 1.05-1.93x
    (docs/performance.md, "sumwake").
    The rows run as one call or as one task a pool thread, whichever was faster lately
    (timed_choice.py): on a shared VM neither wins in every state of its load. Tasks
    start on multiples of _SUM_ALIGN rows (OpenBLAS's gemv takes rows four at a time;
    einsum sums each row alone), so every row gets the bits of one call over all rows,
    and the final pairwise sum runs in one fixed order: the result does not depend on
    the thread count, on the way chosen or on which thread took which task (tested).
    Not kept before: gemv rows of 64 on OpenBLAS's own threads (blas_threads.py)."""
    flat = x.reshape(-1)
    nrows = flat.size // SUM_ROW
    whole = nrows * SUM_ROW
    rows = np.empty(nrows + 1, out.dtype)
    kernel = _gemv_rows if flat.nbytes <= GEMV_MAX_BYTES else _einsum_rows
    args = (kernel, flat[:whole].reshape(nrows, SUM_ROW), rows[:nrows])
    threads = P.POOL.threads
    if threads == 1 or nrows < 2 * _SUM_ALIGN * threads:
        _row_sums_one(*args)
    else:
        SUM_CHOICE.run((out.dtype.char, nrows.bit_length(), threads),
                       _row_sums_one, _row_sums_pool, *args)
    if whole < flat.size:
        rows[nrows] = np.add.reduce(flat[whole:])
        out[...] = np.add.reduce(rows)
    else:
        out[...] = np.add.reduce(rows[:nrows])


def _c_sum_one(flat, partials):
    c_sum.sum_blocks(flat, partials, 1)


def _c_sum_team(flat, partials):
    c_sum.sum_blocks(flat, partials, P.POOL.threads)


def _full_sum(out, x):
    """A full sum of a large contiguous float array: c_sum.py's C blocks where a compiler
    is, on one thread or on the pool's thread count, whichever was faster lately (an
    OpenMP team waits at its end for a worker the machine's other jobs descheduled);
    the row sums below without a compiler."""
    if not c_sum.available(x.dtype):
        return _full_sum_by_rows(out, x)
    flat = x.reshape(-1)
    partials = c_sum.blocks(flat)
    threads = P.POOL.threads
    if threads == 1:
        _c_sum_one(flat, partials)
    else:
        SUM_CHOICE.run(("c", out.dtype.char, partials.size.bit_length(), threads),
                       _c_sum_one, _c_sum_team, flat, partials)
    out[...] = np.add.reduce(partials)


def reduce_large(kernel, ufunc, accumulate_dtype, out, x, dims, keepdim):
    """kernel(out, x, dims=, keepdim=) for a large x: a full reduction by columns and
    per-chunk partials; a reduction that keeps axis 0 as independent chunks of out."""
    if x.dtype in _LOWP or out.dtype in _LOWP:
        return kernel(out, x, dims=dims, keepdim=keepdim)
    reduce = ufunc.reduce
    full = len(dims) == x.ndim
    if full and x.dtype.kind == "f" and out.dtype == x.dtype and x.flags.c_contiguous:
        if ufunc is np.add:
            return _full_sum(out, x)
        if ufunc is not np.multiply:
            return _full_by_columns(out, x, reduce)
    cut = P.split_axis(x.shape, x.size)
    if cut is None:
        return kernel(out, x, dims=dims, keepdim=keepdim)
    axis, n = cut
    if not full and (axis in dims or axis != 0):
        return kernel(out, x, dims=dims, keepdim=keepdim)
    idx = P.blocks(axis, P.bounds(x.shape[axis], n))
    if full:
        dtype = out.dtype if accumulate_dtype else None
        partial = np.empty(n, out.dtype)

        def part(i):
            partial[i] = reduce(x[idx[i]], axis=None, dtype=dtype)
        P.POOL.run(n, part)
        out[...] = reduce(partial, axis=None, dtype=dtype)
        return

    def rows(i):
        kernel(out[idx[i]], x[idx[i]], dims=dims, keepdim=keepdim)
    P.POOL.run(n, rows)


def reduction(kernel, ufunc, accumulate_dtype):
    """kernel(out, x, dims=, keepdim=) with its large-array form."""
    def threaded(out, x, *, dims, keepdim):
        if x.size < P.THRESHOLD:
            return kernel(out, x, dims=dims, keepdim=keepdim)
        return reduce_large(kernel, ufunc, accumulate_dtype, out, x, dims, keepdim)
    threaded.__wrapped__ = kernel
    return threaded


MATMUL_THRESHOLD = 1 << 22      # multiply-adds: below this one BLAS call is cheaper


def _pool_matmul(out, a, b):
    """out = a @ b on the pool: out's rows (2-D) or batches (3-D and up) cut into
    chunks of single-threaded BLAS calls; False when the shapes do not split."""
    if out.ndim == 2:
        rows = out.shape[0]
        n = min(2 * P.POOL.threads, rows // 16)
        if n < 2:
            return False
        idx = P.bounds(rows, n)

        def part(i):
            s = slice(*idx[i])
            np.matmul(a[s], b, out=out[s])
    else:
        batch = out.shape[0]
        if batch < 2 or a.shape[0] != batch:
            return False
        n = min(batch, 2 * P.POOL.threads)
        idx = P.bounds(batch, n)
        whole_b = b.ndim < out.ndim or b.shape[0] != batch

        def part(i):
            s = slice(*idx[i])
            np.matmul(a[s], b if whole_b else b[s], out=out[s])
    P.POOL.run(n, part)
    return True


def matmul(kernel):
    """out = a @ b above MATMUL_THRESHOLD multiply-adds: one call on BLAS's threads,
    or on the pool's chunks while BLAS's threads stall (blas_threads.py)."""
    def pooled(out, a, b):
        if not _pool_matmul(out, a, b):
            kernel(out, a, b)

    def threaded(out, a, b):
        if (P.POOL.threads == 1 or a.dtype in _LOWP or not out.flags.c_contiguous
                or out.ndim < 2 or a.ndim != out.ndim):
            return kernel(out, a, b)
        if out.size * a.shape[-1] < MATMUL_THRESHOLD:
            return kernel(out, a, b)
        BLAS.call(("matmul", a.shape, b.shape, a.dtype.char), kernel, pooled, out, a, b)
    threaded.__wrapped__ = kernel
    return threaded


def linear(kernel):
    """`linear` (x @ weight.T + bias) above MATMUL_THRESHOLD multiply-adds (x of 2 or
    more dims, contiguous when more): one call on BLAS's threads, or the single-threaded call of before while they stall (cutting x's
    rows over the pool instead made the MLP step 1.3x slower on the loaded machine:
    13.4 against 17.4 ms, docs/performance.md)."""
    def threaded(out, x, weight, bias):
        if (P.POOL.threads == 1 or x.dtype in _LOWP or x.ndim < 2 or out.ndim != x.ndim
                or out.size * x.shape[-1] < MATMUL_THRESHOLD):
            return kernel(out, x, weight, bias)
        if x.ndim > 2:
            # a batch of sequences (a transformer's (batch, steps, features)): one GEMM
            # over all the rows, as PyTorch's linear folds them, on BLAS's threads like a
            # 2-D input (before, these always ran on one thread)
            if not (x.flags.c_contiguous and out.flags.c_contiguous):
                return kernel(out, x, weight, bias)
            x, out = x.reshape(-1, x.shape[-1]), out.reshape(-1, out.shape[-1])
        BLAS.call(("linear", x.shape, weight.shape, x.dtype.char), kernel, kernel,
                  out, x, weight, bias)
    threaded.__wrapped__ = kernel
    return threaded


def threaded_kernels(kernels):
    """The kernel table with matmul's and linear's large-array forms (the elementwise
    and reduction kernels test their size inline, kernels.py)."""
    table = dict(kernels)
    table["matmul"] = matmul(table["matmul"])
    table["linear"] = linear(table["linear"])
    return table
