"""The layer table of docs/architecture.md, the imports of every module, and the import graph.

Each top-level folder has one job and a floor; a module may import groupspec modules only from
the folders its row allows (always lower floors). `tests/test_layers.py` enforces the table;
`python tests/layers.py --update-doc` regenerates the graph in docs/architecture.md and
docs/import-graph.{dot,svg} from the code (a test keeps them fresh).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Layer:
    """One folder: its floor, its job, which groupspec folders it may import."""

    folder: str
    floor: int
    job: str
    may_import: frozenset[str]
    standard_library_only: bool = False


def _layer(
    folder: str, floor: int, job: str, *may: str, standard_library_only: bool = False
) -> Layer:
    return Layer(folder, floor, job, frozenset(may), standard_library_only)


# Everything the benchmarks may measure, and the command line may call.
_BELOW_BENCH = (
    "vocabulary",
    "spec",
    "checker",
    "wire",
    "models",
    "impl",
    "impl/server",
    "oracle",
    "conformance",
    "diagrams",
    "record",
    "coverage",
    "verify",
)

LAYERS: tuple[Layer, ...] = (
    _layer(
        "vocabulary",
        0,
        "the Kafka message vocabulary: requests, responses, error codes, group states",
        standard_library_only=True,
    ),
    _layer("spec", 1, "the specification", "vocabulary", standard_library_only=True),
    _layer("checker", 1, "the generic exploration engine (and its Spark engine)"),
    _layer(
        "wire",
        1,
        "Kafka codec helpers, the group APIs' message fields, the trace format",
        "vocabulary",
    ),
    _layer(
        "models",
        2,
        "closed worlds, presets, faults, the bug catalog",
        "vocabulary",
        "spec",
        "checker",
    ),
    _layer("impl", 2, "the optimized coordinator", "vocabulary", standard_library_only=True),
    _layer(
        "impl/server",
        2,
        "the wire server over the optimized coordinator",
        "vocabulary",
        "impl",
        "wire",
    ),
    _layer(
        "oracle",
        2,
        "judging other implementations: traces, assignors",
        "vocabulary",
        "spec",
        "wire",
        "checker",
    ),
    _layer(
        "conformance",
        3,
        "differential machinery, vectors, adapters",
        "vocabulary",
        "spec",
        "checker",
        "wire",
        "models",
        "impl",
        "oracle",
    ),
    _layer(
        "diagrams",
        3,
        "state machines and sequence charts",
        "vocabulary",
        "spec",
        "checker",
        "models",
    ),
    _layer("record", 3, "recording proxy, real-client workloads, probes", "wire"),
    _layer(
        "coverage", 3, "the rule index and rule coverage", "vocabulary", "spec", "checker", "models"
    ),
    _layer(
        "verify",
        3,
        "a preset's check as the product runs it: the engine, the check, its result document",
        "checker",
        "models",
    ),
    _layer("bench", 4, "every benchmark", *_BELOW_BENCH),
    _layer(
        "mutation",
        4,
        "the checker's mutation score: mutants of spec/ judged by the presets",
        "spec",
        "checker",
        "models",
        "coverage",
    ),
    _layer(
        "swarm",
        4,
        "swarm verification: many small checks, one union report",
        "checker",
        "models",
        "coverage",
        "verify",
    ),
    _layer("cli", 5, "argument parsing and printing", *_BELOW_BENCH, "bench", "mutation", "swarm"),
)
LAYER_OF = {layer.folder: layer for layer in LAYERS}
FOLDERS = tuple(sorted({layer.folder.split("/")[0] for layer in LAYERS}))


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it stands."""

    path: str  # the importing file, relative to the repository
    line: int
    module: str  # absolute module name ("groupspec.spec.state", "kafka.protocol", "os")
    # What `from module import a, b` takes from it (names or submodules); () for `import`.
    names: tuple[str, ...] = ()


def layer_of_path(path: str) -> Layer:
    """The layer a repository file belongs to (its deepest folder with a row)."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        layer = LAYER_OF.get("/".join(parts[:depth]))
        if layer is not None:
            return layer
    raise KeyError(f"{path} is in no layer of tests/layers.py")


def layer_of_module(module: str) -> str | None:
    """The folder of a `groupspec.` module ("groupspec.impl.server.apis" -> "impl/server")."""
    if not module.startswith("groupspec."):
        return None
    parts = module.split(".")[1:]
    for depth in range(len(parts), 0, -1):
        if "/".join(parts[:depth]) in LAYER_OF:
            return "/".join(parts[:depth])
    return parts[0]


def module_name(path: str) -> str:
    """The import name of a repository file ("impl/server/apis.py" -> "groupspec.impl.server.apis")."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["groupspec", *parts])


def _is_type_checking(node: ast.AST) -> bool:
    """Whether `node` is `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): imports only for mypy."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _nodes(tree: ast.AST, *, runtime: bool) -> list[ast.AST]:
    """Every node of `tree`; with `runtime`, none under `if TYPE_CHECKING:` (its else stays)."""
    found: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        found.append(node)
        if runtime and isinstance(node, ast.If) and _is_type_checking(node):
            pending += [node.test, *node.orelse]
        else:
            pending += list(ast.iter_child_nodes(node))
    return found


def imports_of(path: str, source: str, *, runtime: bool = False) -> list[Import]:
    """Every import of a module's source, relative ones resolved against `path`; with
    `runtime`, only those that run (a lazy import inside a function counts, one under
    `if TYPE_CHECKING:` does not)."""
    package = module_name(path)
    if not path.endswith("__init__.py"):
        package = package.rsplit(".", 1)[0]
    found: list[Import] = []
    for node in _nodes(ast.parse(source, path), runtime=runtime):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names = tuple(alias.name for alias in node.names)
            found.append(Import(path, node.lineno, module, names))
    return found


def module_graph() -> dict[str, dict[str, int]]:
    """The runtime imports between groupspec modules: for each module, the modules it
    imports, each with the line of its first import. `from package import name` imports the
    package and, when `name` is a submodule, that module too."""
    files = source_files()
    modules = {module_name(path) for path in files}
    graph: dict[str, dict[str, int]] = {}
    for path in files:
        edges: dict[str, int] = {}
        here = module_name(path)
        for imported in imports_of(path, (ROOT / path).read_text(), runtime=True):
            targets = [imported.module]
            if imported.module in modules:
                targets += [f"{imported.module}.{name}" for name in imported.names]
            for target in targets:
                if target in modules and target != here:
                    edges.setdefault(target, imported.line)
        graph[here] = edges
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every set of modules that import each other in a circle (strongly connected
    components of more than one module, or a module importing itself), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        # Tarjan's algorithm, iteratively: (module, its targets not yet visited).
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, {})))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, {}):
                    cycles.append(sorted(component))
    return cycles


def dependency_order(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every module after all the modules it imports (the graph must be acyclic), ties by name."""
    remaining = {module: set(targets) for module, targets in graph.items()}
    order: list[str] = []
    while remaining:
        ready = sorted(module for module, targets in remaining.items() if not targets)
        if not ready:
            raise ValueError(f"import cycles: {import_cycles(graph)}")
        order += ready
        for module in ready:
            del remaining[module]
        for targets in remaining.values():
            targets.difference_update(ready)
    return order


def violations(path: str, source: str) -> list[str]:
    """What in a module's imports breaks the layer table, one message per import."""
    layer = layer_of_path(path)
    problems = []
    for imported in imports_of(path, source):
        target = layer_of_module(imported.module)
        top = imported.module.split(".")[0]
        where = f"{imported.path}:{imported.line}"
        if target is None:
            if (
                layer.standard_library_only
                and top not in sys.stdlib_module_names
                and top != "__future__"
            ):
                problems.append(
                    f"{where}: imports {imported.module}, but {layer.folder}/ may import the "
                    "standard library only"
                )
            continue
        if target == layer.folder or target in layer.may_import:
            continue
        allowed = ", ".join(sorted(layer.may_import)) or "nothing of groupspec"
        floor = LAYER_OF[target].floor if target in LAYER_OF else "?"
        problems.append(
            f"{where}: imports {imported.module} ({target}/, floor {floor}), but "
            f"{layer.folder}/ (floor {layer.floor}) may import only: {allowed}"
        )
    return problems


def source_files() -> list[str]:
    """Every Python file of the package folders, relative to the repository."""
    return sorted(
        path.relative_to(ROOT).as_posix()
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def folder_edges() -> Counter[tuple[str, str]]:
    """How many import statements each folder has of each other folder."""
    edges: Counter[tuple[str, str]] = Counter()
    for path in source_files():
        source = (ROOT / path).read_text()
        here = layer_of_path(path).folder
        for imported in imports_of(path, source):
            target = layer_of_module(imported.module)
            if target is not None and target != here:
                edges[(here, target)] += 1
    return edges


def graph_dot() -> str:
    """The folder import graph as Graphviz source, floors from bottom to top."""
    edges = folder_edges()
    lines = [
        "// Generated by `python tests/layers.py --update-doc`; do not edit.",
        "digraph imports {",
        '  rankdir=BT; node [shape=box, fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9, color="#666666"];',
    ]
    for floor in sorted({layer.floor for layer in LAYERS}):
        names = [layer.folder for layer in LAYERS if layer.floor == floor]
        nodes = " ".join(f'"{name}" [label="{name}/\\nfloor {floor}"];' for name in names)
        lines.append(f"  {{ rank=same; {nodes} }}")
    for source, target in sorted(edges):
        lines.append(f'  "{source}" -> "{target}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def table_markdown() -> str:
    """The layer table with what each folder imports today, as Markdown."""
    edges = folder_edges()
    rows = [
        "| floor | folder | job | may import | imports today |",
        "|---|---|---|---|---|",
    ]
    for layer in LAYERS:
        allowed = ", ".join(sorted(layer.may_import))
        if layer.standard_library_only:
            allowed = (
                f"the standard library and {allowed}" if allowed else "the standard library only"
            )
        allowed = allowed or "nothing of groupspec"
        used = ", ".join(target for source, target in sorted(edges) if source == layer.folder)
        rows.append(
            f"| {layer.floor} | `{layer.folder}/` | {layer.job} | {allowed} | {used or '—'} |"
        )
    return "\n".join(rows) + "\n"


BEGIN = "<!-- BEGIN GENERATED by `python tests/layers.py --update-doc` -->"
END = "<!-- END GENERATED -->"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
DOT_FILE = ROOT / "docs" / "import-graph.dot"
SVG_FILE = ROOT / "docs" / "import-graph.svg"


def with_generated_block(document: str) -> str:
    """docs/architecture.md with its generated block replaced by the current table."""
    start, end = document.index(BEGIN) + len(BEGIN), document.index(END)
    return document[:start] + "\n" + table_markdown() + document[end:]


def main() -> int:
    """Regenerate docs/architecture.md's table and docs/import-graph.{dot,svg}."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--update-doc", action="store_true")
    args = parser.parse_args()
    if not args.update_doc:
        sys.stdout.write(table_markdown())
        return 0
    ARCHITECTURE.write_text(with_generated_block(ARCHITECTURE.read_text()))
    DOT_FILE.write_text(graph_dot())
    svg = subprocess.run(
        ["dot", "-Tsvg"], input=graph_dot(), capture_output=True, text=True, check=True
    ).stdout
    SVG_FILE.write_text(svg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
