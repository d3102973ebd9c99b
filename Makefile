# Two entry points (see README): `make demo` and `make test`. Every step is idempotent.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build/cpp
APT_PACKAGES := build-essential cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev \
                libyaml-cpp-dev nlohmann-json3-dev libopenblas-dev chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test setup apt venv build cpp-test py-test lint format bench bench-deps clean \
        accelforge-check

demo: setup
	$(VENV)/bin/solar analyze examples/ir/linear_bias_matmul.py --arch H100_PCIe_paper --per-node
	@echo
	@echo "The same program written in PyTorch: captured, lowered to IR, validated, analysed:"
	$(VENV)/bin/solar analyze workloads/level2/linear_bias_matmul.py --arch H100_PCIe_paper

test: setup cpp-test py-test lint

setup: apt venv build

apt:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi

$(VENV)/.deps: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned: it installs from local disk; a looser spec would download
	# a multi-GB CUDA build (the package itself accepts torch>=2.4).
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4" "PyYAML>=6" "pytest>=8" \
	    "ruff>=0.6" "clang-format==18.1.8" "numpy>=1.24" "ml_dtypes>=0.4" \
	    "matplotlib>=3.7"
	touch $@

venv: $(VENV)/.deps

# One CMake tree builds the core, the extension and the C++ tests; the editable install
# reuses it (scikit-build-core's build-dir), so nothing compiles twice.
build: venv
	$(PY) -m pip install -q --no-build-isolation --no-deps -e . \
	    -Cbuild-dir=$(BUILD) -Ccmake.define.SOLAR_BUILD_TESTS=ON \
	    -Ccmake.define.SOLAR_BUILD_BENCH=ON -Ccmake.define.SOLAR_WERROR=ON \
	    -Ccmake.args=-GNinja -Cbuild.tool-args=-j2

cpp-test: build
	ctest --test-dir $(BUILD) --output-on-failure -j2

py-test: build
	# SOLAR_REQUIRE_BROWSER: the HTML report test fails, not skips, without chromium.
	SOLAR_REQUIRE_BROWSER=1 $(PY) -m pytest -q -rs

lint: venv
	$(VENV)/bin/ruff check python tests/python bench
	$(VENV)/bin/ruff format --check python tests/python bench
	$(VENV)/bin/clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.h')

format: venv
	$(VENV)/bin/ruff format python tests/python bench
	$(VENV)/bin/clang-format -i $$(git ls-files '*.cpp' '*.h')

# Executor benchmark extras (bench/bench_exec.py): PyTorch (CPU wheel, from local disk) and Numba.
$(VENV)/.bench-deps: $(VENV)/.deps
	$(PY) -m pip install -q "torch==2.13.0" numba
	touch $@

bench-deps: $(VENV)/.bench-deps

bench: build bench-deps
	$(PY) bench/run_bench.py
	$(PY) bench/bench_exec.py

# The AccelForge cross-check (tests/python/test_accelforge.py): AccelForge needs Python >= 3.12
# and Graphviz; this builds a side venv with it and runs the test against it. `make test`
# skips that test (with the reason) where no such interpreter is set.
PYTHON312 ?= python3.12
AF_VENV := .venv-accelforge
$(AF_VENV)/.deps:
	@command -v $(PYTHON312) >/dev/null || { echo "accelforge-check needs $(PYTHON312) (PYTHON312=...)"; exit 1; }
	@command -v dot >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq graphviz; }
	$(PYTHON312) -m venv $(AF_VENV)
	$(AF_VENV)/bin/pip install -q accelforge
	touch $@

accelforge-check: build $(AF_VENV)/.deps
	SOLAR_ACCELFORGE_PYTHON=$(CURDIR)/$(AF_VENV)/bin/python $(PY) -m pytest -q -s tests/python/test_accelforge.py

clean:
	rm -rf build $(VENV) $(AF_VENV)
