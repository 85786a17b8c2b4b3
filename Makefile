# One entry point for people and CI. `make train` and `make test` each set up the
# virtual environment they need (.venv) from nothing but this checkout and PyPI.
PY ?= python3
VENV ?= .venv
PYTHON = $(VENV)/bin/python
PIP = $(PYTHON) -m pip --disable-pip-version-check -q

# what the tests need: every package of this repo (editable) plus the dev tools
PACKAGES = -e . -e backends/cpu -e "backends/cuda[cuda12]" -e "backends/opencl[pocl]" -e conformance
DEV_EXTRAS = -e ".[dev]"

.PHONY: setup setup-dev train test conformance bench clean

$(VENV)/.base:
	$(PY) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install $(PACKAGES) -e ".[examples]"
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PIP) install $(PACKAGES) $(DEV_EXTRAS)
	touch $@

setup: $(VENV)/.base
setup-dev: $(VENV)/.dev

train: setup
	$(PYTHON) examples/train_digits.py

test: setup-dev
	$(PYTHON) -m pytest -n 2 -q

# the conformance suite on every installed backend with a device here (the CPU
# reference runs inside `make test`; meta tensors have no values to compare);
# reports land in reports/. CONFORMANCE_ARGS="" runs in-process (faster, no isolation).
CONFORMANCE_ARGS ?= --isolate --jobs 2
conformance: setup-dev
	mkdir -p reports
	for b in $$($(PYTHON) -m dispatchtorch_conformance --ready-backends); do \
	  case $$b in cpu|meta) continue;; esac; \
	  xf=backends/$$b/conformance-xfails.txt; \
	  $(PYTHON) -m dispatchtorch_conformance --backend $$b $(CONFORMANCE_ARGS) --no-progress \
	    $$([ -f $$xf ] && echo --xfails $$xf) --report reports/conformance-$$b.json \
	    --markdown reports/conformance-$$b.md || exit 1; \
	done

# the benchmarks compare against PyTorch's CPU build, a benchmark-only dependency
$(VENV)/.bench: $(VENV)/.dev
	$(PIP) install -e ".[bench]"
	touch $@

bench: $(VENV)/.bench
	$(PYTHON) -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV)
