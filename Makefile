# Two entry points, both self-contained on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test lint kcat

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The main job: an exhaustive model check of the reference preset (eager-2) with its embedded
# settings: every invariant on every state, every action property on every step.
run: $(STAMP)
	$(VENV)/bin/groupspec check

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# kcat (a Debian package) for the wire server's end-to-end tests; without it that test skips.
kcat:
	@command -v kcat >/dev/null || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get install -y kcat >/dev/null 2>&1 || \
	  { $$SUDO apt-get update >/dev/null && $$SUDO apt-get install -y kcat >/dev/null; } || \
	  echo "warning: kcat could not be installed; tests/test_serve_kcat.py will skip"; }

test: lint kcat
	$(VENV)/bin/pytest
