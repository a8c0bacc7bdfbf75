# refcam: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev

.PHONY: demo test bench bench-accuracy samples clean venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/refcam serve

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m tests.bench.run_all

bench-accuracy: $(STAMP)
	$(PY) -m tests.bench.accuracy

samples: $(STAMP)
	$(PY) samples/generate.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
