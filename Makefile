# Two entry points (see README): `make demo` and `make test`. Every step is idempotent.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build/cpp
APT_PACKAGES := build-essential cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev \
                libyaml-cpp-dev nlohmann-json3-dev libabsl-dev libopenblas-dev chromium \
                clang-14 libclang-rt-14-dev libssl-dev libkissfft-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test setup apt venv build cpp-test cpp-sanitize fuzz-smoke fuzz py-test lint format \
        bench bench-deps clean accelforge-check accelforge-env

demo: setup
	$(VENV)/bin/solar analyze examples/ir/linear_bias_matmul.py --arch H100_PCIe_paper --per-node
	@echo
	@echo "The same program written in PyTorch: captured, lowered to IR, validated, analysed:"
	$(VENV)/bin/solar analyze workloads/level2/linear_bias_matmul.py --arch H100_PCIe_paper

test: setup cpp-test cpp-sanitize fuzz-smoke py-test lint

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
	$(PY) -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4" "PyYAML>=6" "pytest>=8" "pytest-xdist>=3.5" \
	    "ruff>=0.6" "clang-format==18.1.8" "numpy>=1.24" "ml_dtypes>=0.4" \
	    "matplotlib>=3.7"
	# Model zoos for the tests (pure Python; models are built from config objects, nothing
	# is downloaded) and einops, which much model code imports.
	$(PY) -m pip install -q "transformers>=4.50" "einops>=0.7"
	# The JAX front end (docs/jax.md): JAX and Flax on the CPU.
	$(PY) -m pip install -q "jax>=0.4.35" "flax>=0.10"
	# `solar batch --engine ray` (docs/pytorch.md, "Batch runs"): its tests start a local
	# cluster.
	$(PY) -m pip install -q "ray>=2.9"
	# torchao's quantised weights (tensor subclasses: int8 codes and scales) for their tests.
	$(PY) -m pip install -q "torchao>=0.18"
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

# The second configuration: clang, every C++ test under AddressSanitizer and
# UndefinedBehaviorSanitizer (any report fails the test), and the libFuzzer target
# (fuzz/README.md). Its own tree, so it never disturbs build/cpp.
SAN_BUILD := build/sanitize
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cpp-sanitize: apt
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 \
	    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" -DSOLAR_SANITIZE=ON \
	    -DSOLAR_BUILD_FUZZ=ON -DSOLAR_BUILD_TESTS=ON -DSOLAR_BUILD_PYTHON=OFF \
	    -DSOLAR_BUILD_BENCH=OFF -DSOLAR_WERROR=ON >/dev/null
	ninja -C $(SAN_BUILD) -j2
	$(SAN_ENV) ctest --test-dir $(SAN_BUILD) --output-on-failure -j2

# A bounded fuzz run from the seeds (examples/ir, tests/errors) and every input that ever
# crashed (fuzz/crashes/), in a scratch corpus: a fixed number of executions (FUZZ_RUNS, the
# seeds included) from a fixed seed (FUZZ_SEED; 0 draws one), so that CI tries the same
# inputs however fast the machine is (10,000 took 64 s of CPU on the 2-core development
# machine, as long as the 60 s run it replaced; fuzz/README.md). The run's log is kept in
# $(SAN_BUILD)/fuzz-smoke.log and its stats printed last. A finding fails the target and is
# written to $(SAN_BUILD)/fuzz-artifacts/: keep it in fuzz/crashes/ and fix it.
FUZZ_RUNS ?= 10000
FUZZ_SEED ?= 1
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -timeout=30 -rss_limit_mb=2048 -dict=fuzz/solar.dict -print_final_stats=1 \
              -artifact_prefix=$(SAN_BUILD)/fuzz-artifacts/
fuzz-smoke: cpp-sanitize
	rm -rf $(SAN_BUILD)/fuzz-corpus && mkdir -p $(SAN_BUILD)/fuzz-corpus $(SAN_BUILD)/fuzz-artifacts
	cp examples/ir/*.py tests/errors/*.py $(SAN_BUILD)/fuzz-corpus/
	find fuzz/crashes -type f ! -name 'README*' -exec cp {} $(SAN_BUILD)/fuzz-corpus/ \;
	set -o pipefail; $(SAN_ENV) $(SAN_BUILD)/fuzz/fuzz_pipeline $(FUZZ_FLAGS) \
	    -runs=$(FUZZ_RUNS) -seed=$(FUZZ_SEED) $(SAN_BUILD)/fuzz-corpus 2>&1 \
	    | tee $(SAN_BUILD)/fuzz-smoke.log
	@echo "fuzz-smoke: $(FUZZ_RUNS) executions from seed $(FUZZ_SEED), no finding:"
	@grep -E '^(Done|stat::)' $(SAN_BUILD)/fuzz-smoke.log

# A long run outside CI (make fuzz FUZZ_SECONDS=3600): one fuzzing process per job, under nice,
# continuing past findings (each is kept in $(SAN_BUILD)/fuzz-artifacts/).
fuzz: cpp-sanitize
	mkdir -p $(SAN_BUILD)/fuzz-corpus $(SAN_BUILD)/fuzz-artifacts
	cp -n examples/ir/*.py tests/errors/*.py $(SAN_BUILD)/fuzz-corpus/
	$(SAN_ENV) nice -n 19 $(SAN_BUILD)/fuzz/fuzz_pipeline $(FUZZ_FLAGS) -fork=1 \
	    -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$(FUZZ_SECONDS) \
	    $(SAN_BUILD)/fuzz-corpus

# pytest runs its files on PYTEST_JOBS processes (pytest-xdist), each file whole on one of them
# (--dist loadfile: a module's fixtures are built once). On the 2-core development machine the
# suite took 1,093 s on 2 processes against about 1,700 s on one (same tests, same machine);
# PYTEST_JOBS=0 runs it in this process, as plain `pytest` does.
PYTEST_JOBS ?= 2
py-test: build accelforge-env
	# SOLAR_REQUIRE_BROWSER: the HTML report test fails, not skips, without chromium.
	# SOLAR_ACCELFORGE_PYTHON: the side venv's interpreter, when accelforge-env built one.
	af=$(CURDIR)/$(AF_VENV)/bin/python; [ -n "$(PYTHON312)" ] && [ -f $(AF_VENV)/.deps ] \
	    && export SOLAR_ACCELFORGE_PYTHON=$$af; \
	SOLAR_REQUIRE_BROWSER=1 $(PY) -m pytest -q -rs -n $(PYTEST_JOBS) --dist loadfile

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
# (its own syntax) and Graphviz, and this project runs on 3.11. `make test` looks for such an
# interpreter (python3.13, python3.12, or a pyenv-installed 3.12+), builds a side venv with
# accelforge in it and runs the test against it; where there is none it says so and the test
# is skipped with the reason. PYTHON312=/path/to/python3.12 chooses one; PYTHON312= (empty)
# turns the check off.
ifeq ($(origin PYTHON312), undefined)
PYTHON312 := $(shell for c in python3.13 python3.12 \
    $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null); do \
    $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 \
    && { command -v $$c; break; }; done)
endif
AF_VENV := .venv-accelforge
$(AF_VENV)/.deps:
	@[ -n "$(PYTHON312)" ] || { echo "accelforge-check needs Python >= 3.12 (PYTHON312=...)"; exit 1; }
	@command -v dot >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq graphviz; }
	[ -x $(AF_VENV)/bin/python ] || $(PYTHON312) -m venv $(AF_VENV)
	$(AF_VENV)/bin/python -m pip install -q accelforge
	touch $@

# Not fatal for `make test`: without the side venv the test skips and prints why.
accelforge-env:
	@if [ -z "$(PYTHON312)" ]; then \
	  echo "no Python >= 3.12 found: the AccelForge cross-check will be skipped (PYTHON312=...)"; \
	elif ! $(MAKE) --no-print-directory $(AF_VENV)/.deps; then \
	  echo "WARNING: setting up AccelForge failed: its cross-check will be skipped"; fi

accelforge-check: build $(AF_VENV)/.deps
	SOLAR_ACCELFORGE_PYTHON=$(CURDIR)/$(AF_VENV)/bin/python $(PY) -m pytest -q -s tests/python/test_accelforge.py

clean:
	rm -rf build $(VENV) $(AF_VENV)
