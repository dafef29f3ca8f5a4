# Two entry points, both self-contained on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test lint

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The main job: the default embedded check (a seeded random simulation over the specification
# until the exhaustive model checker lands).
run: $(STAMP)
	$(VENV)/bin/groupspec simulate

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: lint
	$(VENV)/bin/pytest
