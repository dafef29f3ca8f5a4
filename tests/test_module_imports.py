"""Every groupspec module imports cleanly: no two modules import each other (however
indirectly, lazy imports inside functions included), each imports in a fresh interpreter in
dependency order and alone, and none needs an optional extra (`pip install groupspec` without
`[spark]`, `[clients]` or the mutation tools).

The module graph is read from the source by `tests/layers.py`, as the layer table is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from layers import ROOT, dependency_order, import_cycles, imports_of, module_graph, source_files

# The optional extras and dev tools a plain `pip install groupspec` lacks: a fresh interpreter
# with these made unimportable (a None in sys.modules makes `import x` raise ImportError).
OPTIONAL = ("pyspark", "py4j", "aiokafka", "confluent_kafka", "cosmic_ray", "coverage")
WITHOUT_EXTRAS = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in OPTIONAL)


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_no_modules_import_each_other_in_a_circle():
    graph = module_graph()
    described = []
    for cycle in import_cycles(graph):
        members = set(cycle)
        edges = [
            f"  {module} imports {target} (line {line})"
            for module in cycle
            for target, line in sorted(graph[module].items())
            if target in members
        ]
        described.append("a cycle:\n" + "\n".join(edges))
    assert not described, "\n".join(described)


def test_the_cycle_finder_finds_a_cycle_and_orders_what_has_none():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}, "e": {}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"a": 1}}) == [["a"]]
    acyclic = {"a": {"b": 1, "c": 1}, "b": {"c": 1}, "c": {}, "d": {}}
    assert dependency_order(acyclic) == ["c", "d", "b", "a"]
    with pytest.raises(ValueError, match="cycles"):
        dependency_order(graph)


def test_every_module_imports_in_dependency_order_without_the_extras():
    order = dependency_order(module_graph())
    code = (
        "import importlib, traceback\n"
        f"for name in {order!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except BaseException:\n"
        "        print(name); traceback.print_exc(); raise SystemExit(1)\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stdout + done.stderr


def third_party_modules() -> list[str]:
    """The modules of installed libraries that groupspec modules import (not the standard
    library, not an optional extra), by their full names."""
    names = {
        found.module
        for path in source_files()
        for found in imports_of(path, (ROOT / path).read_text())
        if found.module and not found.module.startswith("groupspec")
    }
    excluded = set(sys.stdlib_module_names) | set(OPTIONAL) | {"__future__"}
    return sorted(name for name in names if name.split(".")[0] not in excluded)


@pytest.mark.slow
def test_each_module_imports_alone_without_the_extras():
    """Each module in a process of its own, forked from an interpreter that has imported no
    groupspec module (only the libraries they use, which are not under test, to save time), so
    none depends on another having been imported first."""
    modules = sorted(module_graph())
    code = (
        "import importlib, json, os, traceback\n"
        f"for library in {third_party_modules()!r}:\n"
        "    importlib.import_module(library)\n"
        "failed = {}\n"
        f"for name in {modules!r}:\n"
        "    reader, writer = os.pipe()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.close(reader)\n"
        "        try:\n"
        "            importlib.import_module(name)\n"
        "            os._exit(0)\n"
        "        except BaseException:\n"
        "            os.write(writer, traceback.format_exc().encode())\n"
        "            os._exit(1)\n"
        "    os.close(writer)\n"
        "    with os.fdopen(reader, 'rb') as stream:\n"
        "        error = stream.read().decode()\n"
        "    os.waitpid(pid, 0)\n"
        "    if error:\n"
        "        failed[name] = error\n"
        "print(json.dumps(failed))\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    failed = json.loads(done.stdout.splitlines()[-1])
    assert not failed, "\n".join(f"{name}:\n{error}" for name, error in failed.items())
