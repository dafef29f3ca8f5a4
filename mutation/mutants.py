"""The mutants of the specification, as cosmic-ray generates and applies them.

cosmic-ray (`cosmic-ray init`) walks each module's parse tree with every one of its operators
(comparison, arithmetic and boolean operator swaps, `not` insertion, number changes, decorator
removal, `break`/`continue` swaps, zero-iteration loops, exception replacement) and numbers
each place an operator can change: a mutant is (module, operator, occurrence). The same
operator and occurrence, given to cosmic-ray's `mutate_code`, rebuild the mutated module. This
module only asks cosmic-ray for the list and for the mutated text; running a mutant is
`mutant_run`'s job.

Mutants inside type annotations are set apart: every module of `spec/` defers its annotations
(`from __future__ import annotations`), so an annotation is a string nobody evaluates and
`str | None` → `str - None` changes nothing at run time. cosmic-ray does not know that; they
are equivalent by construction and are counted, not run.
"""

from __future__ import annotations

import ast
import difflib
import random
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import groupspec.spec as spec_package

SPEC_DIR = Path(spec_package.__file__).resolve().parent
FUTURE_ANNOTATIONS = "from __future__ import annotations"


@dataclass(frozen=True, order=True)
class Mutant:
    """One cosmic-ray mutation of one module of `spec/` (module path relative to spec/)."""

    module: str
    operator: str
    occurrence: int
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    # The first line of the innermost statement around the mutation: a line tracer reports a
    # multi-line statement by the lines its instructions carry, not always the mutated one.
    statement_line: int

    @property
    def ident(self) -> str:
        """A stable name: module, operator and occurrence."""
        return f"{self.module}:{self.operator}:{self.occurrence}"

    @property
    def lines(self) -> range:
        """The source lines that run when the mutated code runs: its statement's first line to
        the mutation's last."""
        return range(min(self.statement_line, self.start_line), self.end_line + 1)

    def source(self, spec_dir: Path = SPEC_DIR) -> str:
        """The text of the mutant's module with the mutation applied."""
        return mutated_source(self, spec_dir)


class SpecChange(Protocol):
    """A change of one module of spec/ a campaign judges: a generated mutant or a hand-written
    fault (mutation/faults.py)."""

    @property
    def module(self) -> str:
        """The module it changes, relative to spec/."""
        ...

    @property
    def ident(self) -> str:
        """A stable name."""
        ...

    @property
    def lines(self) -> range:
        """The module's lines whose code runs when the changed code runs."""
        ...

    def source(self, spec_dir: Path = SPEC_DIR) -> str:
        """The changed module's text."""
        ...


@dataclass(frozen=True)
class MutantSet:
    """Every mutant cosmic-ray generates for the modules, the ones in annotations set apart."""

    runnable: tuple[Mutant, ...]
    in_annotations: tuple[Mutant, ...]

    @property
    def total(self) -> int:
        """Every generated mutant."""
        return len(self.runnable) + len(self.in_annotations)


# Folders of spec/ the campaign's killers (the classic reference presets) do not explore:
# KIP-848's consumer group (spec/kip848/) has presets of its own kind, which the campaign does not
# run yet, so each of its mutants would survive "in code no preset runs" and shift every seeded
# sample of the classic specification's mutants.
UNEXPLORED_FOLDERS = ("kip848/",)


def spec_modules(spec_dir: Path = SPEC_DIR) -> tuple[str, ...]:
    """Every Python module of the specification that the presets explore, relative to spec/,
    sorted (`UNEXPLORED_FOLDERS` left out)."""
    modules = (path.relative_to(spec_dir).as_posix() for path in spec_dir.rglob("*.py"))
    return tuple(sorted(m for m in modules if not m.startswith(UNEXPLORED_FOLDERS)))


def generate_mutants(spec_dir: Path = SPEC_DIR, modules: Sequence[str] | None = None) -> MutantSet:
    """Every mutant cosmic-ray's operators generate for `modules` (default: all of spec/)."""
    from cosmic_ray.commands.init import init
    from cosmic_ray.work_db import WorkDB, use_db

    names = tuple(modules) if modules is not None else spec_modules(spec_dir)
    paths = [spec_dir / name for name in names]
    with (
        tempfile.TemporaryDirectory(prefix="groupspec-mutants-") as scratch,
        use_db(Path(scratch) / "session.sqlite", WorkDB.Mode.create) as work_db,
    ):
        init(paths, work_db, {})
        specs = [mutation for item in work_db.pending_work_items for mutation in item.mutations]
    trees = {name: _parse(spec_dir / name) for name in names}
    mutants = sorted(_mutant(spec, spec_dir, trees) for spec in specs)
    spans = {name: annotation_spans(spec_dir / name) for name in names}
    in_annotations = tuple(m for m in mutants if _inside(m, spans[m.module]))
    runnable = tuple(m for m in mutants if not _inside(m, spans[m.module]))
    return MutantSet(runnable, in_annotations)


def _mutant(spec: Any, spec_dir: Path, trees: Mapping[str, ast.Module]) -> Mutant:
    """A cosmic-ray MutationSpec as a Mutant."""
    module = Path(spec.module_path).relative_to(spec_dir).as_posix()
    (start_line, start_col), (end_line, end_col) = spec.start_pos, spec.end_pos
    return Mutant(
        module=module,
        operator=spec.operator_name,
        occurrence=spec.occurrence,
        start_line=start_line,
        start_col=start_col,
        end_line=end_line,
        end_col=end_col,
        statement_line=statement_line(trees[module], start_line),
    )


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def statement_line(tree: ast.Module, line: int) -> int:
    """The first line of the innermost statement that spans `line` (`line` when none does)."""
    starts = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(starts, default=line)


Span = tuple[tuple[int, int], tuple[int, int]]


def annotation_spans(path: Path) -> tuple[Span, ...]:
    """The (line, column) spans of a module's annotations, when the module defers them
    (otherwise none: its annotations are evaluated and mutating them matters)."""
    source = path.read_text(encoding="utf-8")
    tree = _parse(path)
    if not _defers_annotations(tree):
        return ()
    lines = source.splitlines()
    spans: list[Span] = []
    for node in ast.walk(tree):
        for annotation in _annotations_of(node):
            assert annotation.end_lineno is not None and annotation.end_col_offset is not None
            start = (annotation.lineno, _char_col(lines, annotation.lineno, annotation.col_offset))
            end_col = _char_col(lines, annotation.end_lineno, annotation.end_col_offset)
            spans.append((start, (annotation.end_lineno, end_col)))
    return tuple(spans)


def _defers_annotations(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )


def _annotations_of(node: ast.AST) -> Iterable[ast.expr]:
    if isinstance(node, ast.arg) and node.annotation is not None:
        yield node.annotation
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
        yield node.returns
    elif isinstance(node, ast.AnnAssign):
        yield node.annotation


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    """ast counts columns in UTF-8 bytes, cosmic-ray (parso) in characters."""
    return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8"))


def _inside(mutant: Mutant, spans: Iterable[Span]) -> bool:
    start, end = (mutant.start_line, mutant.start_col), (mutant.end_line, mutant.end_col)
    return any(low <= start and end <= high for low, high in spans)


@dataclass(frozen=True)
class Draw:
    """A seeded sample of mutants, and the stillborn ones drawn on the way (set aside)."""

    mutants: tuple[Mutant, ...]
    stillborn: tuple[Mutant, ...]


def draw_mutants(
    mutants: Sequence[Mutant], size: int, seed: int, spec_dir: Path = SPEC_DIR
) -> Draw:
    """`size` mutants drawn uniformly without replacement (all when fewer), seeded, from those
    whose module still compiles once mutated. A stillborn mutant (cosmic-ray's text is not
    Python, as when it turns a keyword-only `*` into `&`) is set aside and the draw goes on."""
    order = sorted(mutants)
    random.Random(seed).shuffle(order)
    drawn: list[Mutant] = []
    stillborn: list[Mutant] = []
    for mutant in order:
        if len(drawn) == size:
            break
        (drawn if compiles(mutant, spec_dir) else stillborn).append(mutant)
    return Draw(tuple(drawn), tuple(stillborn))


class UnknownMutantError(ValueError):
    """A mutant asked for by name that cosmic-ray does not generate."""


def pick_mutants(mutants: Sequence[Mutant], idents: Sequence[str]) -> tuple[Mutant, ...]:
    """The mutants named by `idents` (`Mutant.ident`: module:operator:occurrence), in that
    order; UnknownMutantError names the first that is not among `mutants`."""
    by_ident = {mutant.ident: mutant for mutant in mutants}
    for ident in idents:
        if ident not in by_ident:
            raise UnknownMutantError(f"no runnable mutant {ident!r} (module:operator:occurrence)")
    return tuple(by_ident[ident] for ident in dict.fromkeys(idents))


def compiles(mutant: Mutant, spec_dir: Path = SPEC_DIR) -> bool:
    """Whether the mutated module is still Python."""
    source = mutated_source(mutant, spec_dir)
    try:
        with warnings.catch_warnings():
            # A mutant such as `x is 0` compiles, with a warning nobody needs to read.
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(source, mutant.module, "exec")
    except SyntaxError:
        return False
    return True


def mutated_source(mutant: Mutant, spec_dir: Path = SPEC_DIR) -> str:
    """The text of the mutant's module with cosmic-ray's mutation applied."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    original = (spec_dir / mutant.module).read_text(encoding="utf-8")
    mutated = mutate_code(original, get_operator(mutant.operator)(), mutant.occurrence)
    if mutated is None:
        raise ValueError(f"cosmic-ray applies no mutation for {mutant.ident}")
    return str(mutated)


def diff_lines(mutant: Mutant, spec_dir: Path = SPEC_DIR) -> tuple[str, ...]:
    """The mutation as a diff: the removed lines ("- ...") and the added ones ("+ ...")."""
    original = (spec_dir / mutant.module).read_text(encoding="utf-8").splitlines()
    mutated = mutated_source(mutant, spec_dir).splitlines()
    return tuple(
        f"{line[0]} {line[1:].strip()}"
        for line in difflib.unified_diff(original, mutated, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    )
