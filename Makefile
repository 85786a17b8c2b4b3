# One entry point for people and CI. `make train` and `make test` each set up the
# virtual environment they need (.venv) from nothing but this checkout and PyPI.
PY ?= python3
VENV ?= .venv
PYTHON = $(VENV)/bin/python
PIP = $(PYTHON) -m pip --disable-pip-version-check -q

# the core and its reference backend: all that training on the CPU needs
CORE = -e . -e backends/cpu
# cupy only where an NVIDIA driver is (without it the CUDA backend lists no devices)
CUDA_EXTRA := $(shell command -v nvidia-smi >/dev/null 2>&1 && echo "[cuda12]")
# the rest of what the tests exercise: every other package of this repo, editable
PACKAGES = -e "backends/opencl[pocl]" -e "backends/cuda$(CUDA_EXTRA)" -e conformance
# setuptools' editable-install banner says nothing actionable here
QUIET_BUILD = PYTHONWARNINGS=ignore

.PHONY: setup setup-dev train test test-unit test-distributed conformance third-party bench clean

$(VENV)/.base:
	$(PY) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(QUIET_BUILD) $(PIP) install $(CORE) -e ".[examples]"
	touch $@

# PyTorch's CPU build for the comparison tests, when the index offers one (never the
# multi-GB CUDA build; without it those tests skip with their reason): tools/install_pytorch_cpu.py
# (redone when pyproject.toml changes, so a dev dependency added there reaches an existing .venv)
$(VENV)/.dev: $(VENV)/.base pyproject.toml
	$(QUIET_BUILD) $(PIP) install $(PACKAGES) -e ".[dev,distributed]"
	$(PYTHON) tools/install_pytorch_cpu.py
	touch $@

setup: $(VENV)/.base
setup-dev: $(VENV)/.dev

train: setup
	$(PYTHON) examples/train_digits.py

# Backends other than the CPU reference compile a kernel per op, dtype and layout the
# first time they meet it (PoCL: ~0.5 s each, cached on disk after), so `make test` runs
# their unit tests on TEST_DTYPES and the conformance suite on CONFORMANCE_DTYPES; `all`
# means every dtype they claim (on OpenCL about 40 minutes on 2 cores with cold caches,
# 3 minutes warm). The CPU reference is always checked on every dtype.
TEST_DTYPES ?= float32,int64
CONFORMANCE_DTYPES ?= float32,float64,int32,int64

# the whole suite: unit tests (the CPU conformance run included), conformance on every
# other backend with a device here, and the third-party example backend built from scratch
test: setup-dev
	$(MAKE) test-unit conformance third-party test-distributed

# the import layers first (pyproject.toml's [tool.importlinter]: no module imports a layer
# above its own; under a second), then the tests. A test that takes its worker down ends
# the run (pytest-xdist 3.8 can wait forever after replacing a crashed loadgroup worker:
# pytest-dev/pytest-xdist#1378)
test-unit: setup-dev
	$(VENV)/bin/lint-imports --no-cache
	DISPATCHTORCH_TEST_DTYPES=$(TEST_DTYPES) $(PYTHON) -m pytest -n 2 --dist loadgroup \
	  --max-worker-restart=0 -q

# dispatchtorch.distributed's tests that run inside an MPI job, on 2 ranks and on 3 (odd
# splits); every rank runs the same tests (tests/distributed/ranks/conftest.py)
MPIEXEC = $(VENV)/bin/mpiexec
test-distributed: setup-dev
	for n in 2 3; do \
	  $(MPIEXEC) -n $$n $(PYTHON) -m pytest -q -p no:xdist -p no:cacheprovider \
	    tests/distributed/ranks/ranks_*.py || exit 1; \
	done

# the conformance suite on every installed backend with a device here (the CPU
# reference runs inside the unit tests, on every dtype; meta tensors have no values to
# compare); reports land in reports/. Each op runs in a subprocess, two at a time.
CONFORMANCE_ARGS ?= --isolate --jobs 2
conformance: setup-dev
	mkdir -p reports
	for b in $$($(PYTHON) -m dispatchtorch_conformance --ready-backends); do \
	  case $$b in cpu|meta) continue;; esac; \
	  xf=backends/$$b/conformance-xfails.txt; \
	  $(PYTHON) -m dispatchtorch_conformance --backend $$b $(CONFORMANCE_ARGS) --no-progress \
	    $$([ "$(CONFORMANCE_DTYPES)" = all ] || echo --dtypes $(CONFORMANCE_DTYPES)) \
	    --no-fallback $$([ -f $$xf ] && echo --xfails $$xf) --report reports/conformance-$$b.json \
	    --markdown reports/conformance-$$b.md --html reports/conformance-$$b.html \
	    --badge reports/conformance-$$b.svg || exit 1; \
	done

third-party: setup-dev
	PYTHON=$(PYTHON) .ci/third_party_backend.sh

# the benchmarks compare against PyTorch's CPU build, a benchmark-only dependency
$(VENV)/.bench: $(VENV)/.dev
	$(QUIET_BUILD) $(PIP) install -e ".[bench]"
	$(PYTHON) tools/install_pytorch_cpu.py --require
	touch $@

bench: $(VENV)/.bench
	$(PYTHON) -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV)
