"""One job per folder, imports only downward: the layer table of docs/architecture.md holds.

The table and the import scanner are `tests/layers.py`; docs/architecture.md and
docs/import-graph.* are generated from the same code and must be current.
"""

from __future__ import annotations

import shutil

import pytest
from layers import (
    ARCHITECTURE,
    DOT_FILE,
    ROOT,
    graph_dot,
    source_files,
    violations,
    with_generated_block,
)


def test_every_module_imports_only_what_its_layer_allows():
    problems = [
        problem
        for path in source_files()
        for problem in violations(path, (ROOT / path).read_text())
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("checker/bfs.py", "from groupspec.models import catalog\n", "checker/ (floor 1)"),
        ("spec/join.py", "import numpy\n", "standard library only"),
        ("impl/join.py", "from groupspec.spec.state import Group\n", "impl/ (floor 2)"),
        ("impl/group.py", "from .server import apis\n", "impl/server/"),
        ("oracle/trace/tracker.py", "from ...conformance import differential\n", "conformance/"),
        ("record/proxy.py", "from groupspec.impl.errors import ErrorCode\n", "record/"),
    ],
)
def test_a_wrong_import_is_named_with_its_file_line_and_rule(path, source, expected):
    (problem,) = violations(path, "\n" + source)
    assert problem.startswith(f"{path}:2: imports ")
    assert expected in problem


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("models/group_world.py", "from groupspec.checker.model import Transition\n"),
        ("impl/server/apis.py", "from ..coordinator import Coordinator\n"),
        ("impl/server/apis.py", "from groupspec.wire import codec\n"),
        ("cli/main.py", "from groupspec.bench import checker_bench\n"),
        ("spec/join.py", "from dataclasses import dataclass\n"),
    ],
)
def test_a_downward_import_is_allowed(path, source):
    assert violations(path, source) == []


def test_architecture_doc_shows_the_current_layers():
    document = ARCHITECTURE.read_text()
    assert with_generated_block(document) == document, (
        "docs/architecture.md is stale: run `python tests/layers.py --update-doc`"
    )


def test_import_graph_is_current():
    assert DOT_FILE.read_text() == graph_dot(), (
        "docs/import-graph.dot is stale: run `python tests/layers.py --update-doc`"
    )


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_import_graph_svg_exists():
    assert DOT_FILE.with_suffix(".svg").stat().st_size > 0


def test_every_package_folder_is_installed():
    import tomllib

    configured = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        "groupspec." + init.parent.relative_to(ROOT).as_posix().replace("/", ".")
        for path in source_files()
        if (init := ROOT / path).name == "__init__.py"
    }
    assert folders == configured, (
        "pyproject.toml [tool.setuptools] packages must list every package"
    )
