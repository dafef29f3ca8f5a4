# Two entry points, both self-contained on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
DOT_STAMP := $(VENV)/.dot-installed
JAVA_STAMP := $(VENV)/.java-installed
KAFKA_STAMP := $(VENV)/.kafka-installed
CHROMIUM_STAMP := $(VENV)/.chromium-installed
# Root installs directly; anyone else goes through sudo when it exists.
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)

.PHONY: run test lint kcat

# The package folders (docs/architecture.md). The install is editable in setuptools' strict
# mode: a tree of links under build/ that Python and static tools (mypy, IDEs) both follow.
# Edits take effect at once; a file added or removed needs a reinstall, so the list of package
# files is kept in MANIFEST, rewritten only when it changes, and the install depends on it.
PACKAGE_FOLDERS := vocabulary spec checker wire models impl oracle conformance diagrams record coverage verify bench mutation swarm cli
MANIFEST := $(VENV)/.package-files
_ := $(shell mkdir -p $(VENV) && find $(PACKAGE_FOLDERS) -type f -not -path '*/__pycache__/*' \
	| sort > $(MANIFEST).new && (cmp -s $(MANIFEST).new $(MANIFEST) || mv $(MANIFEST).new $(MANIFEST)))

$(STAMP): pyproject.toml $(MANIFEST)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	touch $(STAMP)

# `groupspec diagram` lays graphs out with Graphviz's `dot` program, which pip cannot install:
# on Debian it is the `graphviz` package.
$(DOT_STAMP): $(STAMP)
	command -v dot >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq graphviz)
	touch $(DOT_STAMP)

# The Spark engine (`--engine spark`, tested by tests/test_spark_engine.py) runs on a JVM, which
# pip cannot install: on Debian it is the `openjdk-17-jre-headless` package.
$(JAVA_STAMP): $(STAMP)
	command -v java >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq openjdk-17-jre-headless)
	touch $(JAVA_STAMP)

# Apache Kafka's own brokers (`groupspec kafka`, `--target kafka|kafka-3.9`, docs/kafka.md): their
# jars come from Maven Central through Maven (Debian's `maven` package), resolved once into
# ~/.cache/groupspec/kafka/ (or $GROUPSPEC_KAFKA_CACHE). Anything that needs a broker installs a
# missing release by itself; this stamp does it before the tests, and again when the pom changes.
$(KAFKA_STAMP): $(JAVA_STAMP) record/kafka/pom.xml
	command -v mvn >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq maven)
	$(VENV)/bin/groupspec kafka --install
	touch $(KAFKA_STAMP)

# The trace explorer's page (`groupspec explore`, `check --explore`) is tested in a real headless
# browser (tests/test_trace_explorer.py), which pip cannot install: on Debian it is the
# `chromium` package (driven over the DevTools protocol's pipe: no driver package needed).
$(CHROMIUM_STAMP): $(STAMP)
	command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium)
	touch $(CHROMIUM_STAMP)

# The main job: an exhaustive model check of the reference preset (eager-2) with its embedded
# settings: every invariant on every state, every action property on every step.
run: $(STAMP) $(DOT_STAMP)
	$(VENV)/bin/groupspec check

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# kcat (a Debian package) for the wire server's end-to-end tests; without it that test skips.
kcat:
	@command -v kcat >/dev/null || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get install -y kcat >/dev/null 2>&1 || \
	  { $$SUDO apt-get update >/dev/null && $$SUDO apt-get install -y kcat >/dev/null; } || \
	  echo "warning: kcat could not be installed; tests/test_serve_kcat.py will skip"; }

test: lint kcat $(DOT_STAMP) $(JAVA_STAMP) $(KAFKA_STAMP) $(CHROMIUM_STAMP)
	$(VENV)/bin/pytest
