# `make demo` and `make test` bootstrap .venv on first use.
# torch is pinned and installed first: a bare `torch` requirement would pull CUDA wheels.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TORCH  := torch==2.13.0

.PHONY: demo test docs lint bench clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e ".[opencl,dev,peers]" --config-settings editable_mode=compat
	bash scripts/install-opencl.sh
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gpautotune tune configs/demo.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q

# the user guide, benchmark pages and API reference (mkdocs.yml), built into site/;
# strict: a broken link or a docstring griffe cannot read fails the build
docs: $(STAMP)
	$(BIN)/python -m mkdocs build --strict --site-dir site

# style: lint rules (line length included) and formatting, checked without rewriting
LINTED := gpautotune tests benchmarks scripts
lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED) README.md docs  # Python blocks of the docs too

clean:
	rm -rf $(VENV) results site .pytest_cache
