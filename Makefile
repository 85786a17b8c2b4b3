# One entry point for people and CI. `make train` and `make test` each set up the
# virtual environment they need (.venv) from nothing but this checkout and PyPI.
PY ?= python3
VENV ?= .venv
PYTHON = $(VENV)/bin/python
PIP = $(PYTHON) -m pip --disable-pip-version-check -q

# the core and its reference backend: all that training on the CPU needs
CORE = -e . -e backends/cpu
# everything the tests exercise: every package of this repo, editable
PACKAGES = $(CORE) -e "backends/opencl[pocl]" -e "backends/cuda[cuda12]" -e conformance

.PHONY: setup setup-dev train test test-unit conformance third-party bench clean

$(VENV)/.base:
	$(PY) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install $(CORE) -e ".[examples]"
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PIP) install $(PACKAGES) -e ".[dev]"
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
	$(MAKE) test-unit conformance third-party

test-unit: setup-dev
	DISPATCHTORCH_TEST_DTYPES=$(TEST_DTYPES) $(PYTHON) -m pytest -n 2 --dist loadgroup -q

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
	$(PIP) install -e ".[bench]"
	touch $@

bench: $(VENV)/.bench
	$(PYTHON) -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV)
