#!/usr/bin/env bash
# The CUDA backend's whole check on a GPU machine, in one command, in under 8 minutes:
#
#   bash benchmarks/gpu_check.sh            (from anywhere; PYTHON=python3 by default)
#
# 1. finds the GPU (without one: says why and exits 2 at once)
# 2. installs this checkout into a private folder, from nothing but the checkout and any
#    wheels carried under .whl/ (pip --no-index: no network)
# 3. lists the backends: cuda must be ready with no prim left to the CPU
# 4. runs the conformance suite against cuda in strict mode (no CPU fallback)
# 5. trains examples/train_digits.py on cpu and on cuda: cuda must reach the CPU's accuracy
# 6. times matmul, elementwise ops and a training step against PyTorch CUDA
# 7. runs the cuda backend's tests, GPU tests included (every prim and dtype on cupy)
# 8. runs the benchmarks package on cuda (for the record)
# and prints a summary. Logs go to $GPU_CHECK_LOGS (default /tmp/gpu-check); when $OUT is
# set (the device tool sets it) it receives summary.txt, conformance.json, gpu_bench.json
# and logs.tar.gz (every log), few files, as what comes back from such a machine is limited.
# Exit status: 0 all passed, 1 something failed or missed its target, 2 no usable GPU.
# --continue-without-gpu runs every step even without a GPU (to test this script).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
RESULTS=${OUT:-}
OUT=${GPU_CHECK_LOGS:-/tmp/gpu-check}        # every log and report of this run
SITE=${GPU_CHECK_SITE:-/tmp/dispatchtorch-gpu-check-site}
BUDGET=${GPU_CHECK_BUDGET_S:-460}          # seconds for everything, start to summary
WORKERS=${GPU_CHECK_WORKERS:-$(( $(nproc 2>/dev/null || echo 4) > 12 ? 12 : $(nproc 2>/dev/null || echo 4) ))}
CONTINUE=0
[ "${1:-}" = "--continue-without-gpu" ] && CONTINUE=1
mkdir -p "$OUT" && rm -f "$OUT"/*.log "$OUT"/*.json "$OUT"/*.txt "$OUT"/*.ckpt
START=$(date +%s)
SUMMARY=()
FAILED=0

note() { printf '\n=== %s\n' "$*"; }
record() {      # record STEP STATUS DETAIL: STATUS is PASS, FAIL, MISS, MISSING, TIMEOUT or INFO
    SUMMARY+=("$(printf '%-14s %-8s %s' "$1" "$2" "$3")")
    case "$2" in PASS|INFO) ;; *) FAILED=1 ;; esac
}
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
limit() {       # limit SECONDS: at most that, and never past the budget (at least 10 s)
    local l; l=$(left); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 10 ] && l=10; echo "$l"
}
run_logged() {  # run_logged LOG SECONDS CMD...: output to the console and LOG; returns CMD's status
    local log=$1 secs=$2; shift 2
    timeout --kill-after=10 "$secs" "$@" 2>&1 | tee "$log"
    return "${PIPESTATUS[0]}"
}

# -- 1. the GPU ------------------------------------------------------------------------
note "1. GPU"
if ! gpu=$(timeout 60 "$PY" - <<'EOF' 2>&1
import sys
try:
    import cupy
except Exception as exc:
    sys.exit(f"cupy is not importable ({type(exc).__name__}: {exc})")
rt = cupy.cuda.runtime
try:
    n = rt.getDeviceCount()
except Exception as exc:
    sys.exit(f"{exc}")
if n == 0:
    sys.exit("no CUDA device found")
def version(v):
    return f"{v // 1000}.{v % 1000 // 10}"
p = rt.getDeviceProperties(0)
print(f"{n} GPU(s), cuda:0 {p['name'].decode()}, {p['totalGlobalMem'] / 2**30:.0f} GiB; "
      f"cupy {cupy.__version__}, CUDA runtime {version(rt.runtimeGetVersion())}, "
      f"driver {version(rt.driverGetVersion())}")
EOF
); then
    echo "gpu_check: no usable CUDA GPU: ${gpu:-the probe timed out}"
    if [ "$CONTINUE" = 0 ]; then
        exit 2
    fi
    record "gpu" FAIL "${gpu:-probe timed out}"
else
    echo "$gpu"
    record "gpu" PASS "$gpu"
fi
torch_info=$("$PY" -c "import torch; print(f'PyTorch {torch.__version__}, CUDA available: {torch.cuda.is_available()}')" 2>&1 | tail -1)
echo "$torch_info"

# -- 2. install ------------------------------------------------------------------------
note "2. install into $SITE (no network)"
if [ -e "$SITE" ] && [ ! -f "$SITE/.gpu_check_site" ]; then
    echo "gpu_check: $SITE exists and was not made by this script; set GPU_CHECK_SITE elsewhere"
    exit 1
fi
rm -rf "$SITE" && mkdir -p "$SITE" && touch "$SITE/.gpu_check_site"
install_ok=1
if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" .whl/*.whl || install_ok=0
fi
pkgs=(. backends/cpu backends/cuda)
[ -f conformance/pyproject.toml ] && pkgs+=(conformance)
if [ "$install_ok" = 1 ] && timeout 240 "$PY" -m pip install -q --no-index --no-deps \
        --no-build-isolation --no-compile --no-cache-dir --target "$SITE" "${pkgs[@]}" \
        >"$OUT/install.log" 2>&1; then
    record "install" PASS "${pkgs[*]}"
else
    tail -20 "$OUT/install.log"
    record "install" FAIL "pip could not install ${pkgs[*]} (see $OUT/install.log)"
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$SITE/bin:$PATH"
export PYTHONUNBUFFERED=1

# -- 3. backend listing ----------------------------------------------------------------
note "3. backends"
"$PY" -m dispatchtorch.backends 2>&1 | tee "$OUT/backends.txt"
if listing=$("$PY" - <<'EOF' 2>&1
import sys
from dispatchtorch.dispatch import OPS, get_backend
rt = get_backend("cuda")
if rt.status != "ready":
    sys.exit(f"cuda is {rt.status}: {rt.error}")
missing = [p for p in rt.missing_prims if p in OPS]
if missing:
    sys.exit(f"prims left to the CPU: {', '.join(missing)}")
print(f"ready, {len(rt.devices)} device(s), every registered prim on the GPU")
EOF
); then record "backends" PASS "$listing"; else record "backends" FAIL "$(echo "$listing" | tail -1)"; fi

# the CPU run of the training example needs no GPU: start it now, read it in step 5
cpu_training=
if [ -f examples/train_digits.py ]; then
    timeout 200 "$PY" examples/train_digits.py --device cpu --checkpoint "$OUT/digits-cpu.ckpt" \
        >"$OUT/train_cpu.log" 2>&1 &
    cpu_training=$!
fi

# -- 4. conformance --------------------------------------------------------------------
note "4. conformance suite on cuda (DISPATCHTORCH_FALLBACK=error)"
if command -v dispatchtorch-conformance >/dev/null; then
    DISPATCHTORCH_FALLBACK=error run_logged "$OUT/conformance.log" "$(limit 200)" \
        dispatchtorch-conformance --backend cuda --report "$OUT/conformance.json"
    rc=$?
    counts=$("$PY" - "$OUT/conformance.json" <<'EOF' 2>/dev/null
import json, sys
r = json.load(open(sys.argv[1]))
s = r.get("summary") or r.get("counts") or {}
print(", ".join(f"{k} {v}" for k, v in s.items()) if isinstance(s, dict) else s)
EOF
)
    counts=${counts:-$(grep -iE "pass|fail" "$OUT/conformance.log" | tail -1)}
    if [ "$rc" = 124 ]; then record "conformance" TIMEOUT "$counts"
    elif [ "$rc" = 0 ]; then record "conformance" PASS "$counts"
    else record "conformance" FAIL "exit $rc: $counts"; fi
else
    record "conformance" MISSING "dispatchtorch-conformance is not installed (no conformance/ package in this checkout)"
fi

# -- 5. training -----------------------------------------------------------------------
note "5. examples/train_digits.py on cuda (and on cpu, in the background since step 3)"
if [ -f examples/train_digits.py ]; then
    accuracy() { grep -oE "test accuracy [0-9.]+%" "$1" | head -1 | grep -oE "[0-9.]+"; }
    run_logged "$OUT/train_cuda.log" "$(limit 150)" "$PY" examples/train_digits.py --device cuda \
        --checkpoint "$OUT/digits-cuda.ckpt"
    rc=$?
    wait "$cpu_training" 2>/dev/null
    echo "--- cpu:"; tail -3 "$OUT/train_cpu.log"
    cpu_acc=$(accuracy "$OUT/train_cpu.log"); cuda_acc=$(accuracy "$OUT/train_cuda.log")
    if [ "$rc" != 0 ] || [ -z "$cuda_acc" ] || [ -z "$cpu_acc" ]; then
        record "train digits" FAIL "exit $rc; accuracy cuda ${cuda_acc:-?}% cpu ${cpu_acc:-?}%"
    elif "$PY" -c "import sys; sys.exit(0 if $cuda_acc >= $cpu_acc - 1.0 else 1)"; then
        record "train digits" PASS "test accuracy cuda $cuda_acc% vs cpu $cpu_acc%"
    else
        record "train digits" FAIL "test accuracy cuda $cuda_acc% below cpu $cpu_acc%"
    fi
else
    record "train digits" MISSING "examples/train_digits.py is not in this checkout"
fi

# -- 6. against PyTorch CUDA -----------------------------------------------------------
note "6. dispatchtorch cuda vs PyTorch CUDA"
run_logged "$OUT/gpu_bench.log" "$(limit 120)" "$PY" benchmarks/gpu/compare_torch.py --out "$OUT"
rc=$?
worst=$(grep -cE "<-- MISS" "$OUT/gpu_bench.log")
if [ "$rc" = 0 ]; then record "vs pytorch" PASS "every case within its target (see the table above)"
elif [ "$rc" = 1 ]; then record "vs pytorch" MISS "$worst case(s) over target (see the table above)"
elif [ "$rc" = 124 ]; then record "vs pytorch" TIMEOUT "see $OUT/gpu_bench.log"
else record "vs pytorch" FAIL "exit $rc: $(tail -1 "$OUT/gpu_bench.log")"; fi

# -- 7. the backend's own tests --------------------------------------------------------
note "7. cuda backend tests (GPU tests included, $WORKERS workers)"
xdist=()
"$PY" -c "import xdist" 2>/dev/null && xdist=(-n "$WORKERS")
run_logged "$OUT/backend_tests.log" "$(limit 200)" "$PY" -m pytest -q -rs -p no:cacheprovider \
    "${xdist[@]}" backends/cuda/tests
rc=$?
tally=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed)" "$OUT/backend_tests.log" | tail -1)
if [ "$rc" = 124 ]; then record "backend tests" TIMEOUT "$tally"
elif grep -q "no usable GPU" "$OUT/backend_tests.log"; then
    record "backend tests" FAIL "GPU tests skipped: $(grep -m1 'no usable GPU' "$OUT/backend_tests.log")"
elif [ "$rc" = 0 ]; then record "backend tests" PASS "$tally"
else record "backend tests" FAIL "${tally:-pytest exited $rc}"; fi

# -- 8. the benchmarks package ---------------------------------------------------------
note "8. python -m benchmarks --device cuda --quick"
if [ -f benchmarks/__main__.py ] && [ "$(left)" -gt 30 ]; then
    run_logged "$OUT/benchmarks.log" "$(limit 90)" "$PY" -m benchmarks --device cuda --quick \
        --no-chart --out "$OUT/bench"
    rc=$?
    if [ "$rc" = 0 ]; then record "benchmarks" INFO "table above; $OUT/bench/benchmarks.json"
    else record "benchmarks" FAIL "exit $rc (see $OUT/benchmarks.log)"; fi
elif [ -f benchmarks/__main__.py ]; then
    record "benchmarks" INFO "skipped: under 30 s of the time budget left"
else
    record "benchmarks" MISSING "the benchmarks package is not in this checkout"
fi

# -- summary ---------------------------------------------------------------------------
note "summary ($(( $(date +%s) - START )) s)"
{
    echo "${gpu:-no GPU}"
    echo "$torch_info"
    printf '%s\n' "${SUMMARY[@]}"
    [ -f "$OUT/gpu_bench.log" ] && grep -E "^(case|matmul|add|mul|exp|relu|sum|train)" "$OUT/gpu_bench.log"
} | tee "$OUT/summary.txt"
if [ -n "$RESULTS" ]; then
    mkdir -p "$RESULTS"
    cp "$OUT/summary.txt" "$RESULTS/"
    for f in conformance.json gpu_bench.json; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$RESULTS/"; done
    tar czf "$RESULTS/logs.tar.gz" -C "$OUT" --exclude='*.ckpt' .
    echo "results in $RESULTS (summary.txt, logs.tar.gz, JSON reports)"
else
    echo "logs in $OUT"
fi
exit "$FAILED"
