# One entry point for people and CI. `make train` and `make test` each set up the
# virtual environment they need (.venv) from nothing but this checkout and PyPI.
PY ?= python3
VENV ?= .venv
PYTHON = $(VENV)/bin/python
PIP = $(PYTHON) -m pip --disable-pip-version-check -q

# what the tests need: every package of this repo (editable) plus the dev tools
PACKAGES = -e . -e backends/cpu -e "backends/cuda[cuda12]" -e "backends/opencl[pocl]"
DEV_EXTRAS = -e ".[dev]"

.PHONY: setup setup-dev train test bench clean

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

# the benchmarks compare against PyTorch's CPU build, a benchmark-only dependency
$(VENV)/.bench: $(VENV)/.dev
	$(PIP) install -e ".[bench]"
	touch $@

bench: $(VENV)/.bench
	$(PYTHON) -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV)
