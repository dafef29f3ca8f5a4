"""Weak mutation: does a surviving mutant ever compute another value in the presets' runs?

A mutant the checker misses either never changes a value in the runs the presets make (it is
equivalent on every state they explore: `x is Enum.A` for `x == Enum.A`, a bound nobody
reaches), or changes one and no property notices (a gap in the properties). The two call for
different answers, and line coverage cannot tell them apart: the mutated line runs in both.
This is the reachability-infection-propagation view of mutation testing (Offutt and Voas):
a mutant is *infected* in a run when the mutated expression evaluates to another value than
the original there.

The probe rewrites the mutant's module so that the mutated expression evaluates both the
original and the mutated expression, keeps the original's value (so the run is the unmutated
run, step for step), and records the first time the two differ, then ends the process at once
(one difference decides). A mutant whose presets all finish without a difference is not
infected: the checker explored exactly the unmutated state space, so no property could have
seen it. Operators whose change is not one expression (a removed decorator, `break` swapped
for `continue`) have no probe and count as infected, the safe side.
"""

from __future__ import annotations

import ast
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from .mutant_run import PresetBudget, WorkerRun, check_copy
from .mutant_worker import PASS
from .mutants import SPEC_DIR, Mutant, mutated_source

# The environment variable naming the file a probe writes when the two values differ.
INFECTION_LOG = "GROUPSPEC_INFECTION_LOG"
_PROBE = "__groupspec_weak_probe__"
_NOT_IN_LAMBDA = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)
_ZERO_ITERATION = "core/ZeroIterationForLoop"

# The probe, prepended to the mutant's module (after its __future__ imports). It returns the
# original's value, so the run does not change; at the first difference it writes the log and
# ends the process, since one difference decides and the rest of the run would cost time.
_PROBE_SOURCE = f'''
def {_PROBE}(original, mutated, zero_iteration=False):
    import os as _os
    try:
        value = original()
    except BaseException as raised:
        value_error = raised
    else:
        value_error = None
    if zero_iteration:
        if value_error is None:
            value = list(value)
            if value:
                _gs_infected("the loop runs " + str(len(value)) + " times; the mutant none")
        else:
            raise value_error
        return value
    try:
        other = mutated()
    except BaseException as raised:
        other, other_error = None, raised
    else:
        other_error = None
    if (value_error is None) != (other_error is None):
        _gs_infected("one raises, the other does not: " + repr(value_error or other_error)[:200])
    elif value_error is None and _gs_differ(value, other):
        _gs_infected(repr(value)[:100] + " became " + repr(other)[:100])
    if value_error is not None:
        raise value_error
    return value


def _gs_differ(value, other):
    try:
        return type(value) is not type(other) or bool(value != other)
    except Exception:
        return value is not other


def _gs_infected(why):
    import os as _os
    with open(_os.environ["{INFECTION_LOG}"], "a", encoding="utf-8") as log:
        log.write(why + "\\n")
    _os._exit(0)
'''


@dataclass(frozen=True)
class ProbedMutant:
    """A mutant's module rewritten to evaluate both expressions and keep the original's value:
    a SpecChange `check_copy` can run."""

    mutant: Mutant
    text: str

    @property
    def module(self) -> str:
        """The module it changes, relative to spec/."""
        return self.mutant.module

    @property
    def ident(self) -> str:
        """The probed mutant's name."""
        return f"probe of {self.mutant.ident}"

    @property
    def lines(self) -> range:
        """The mutant's lines."""
        return self.mutant.lines

    def source(self, spec_dir: Path = SPEC_DIR) -> str:
        """The probing module's text."""
        return self.text


@dataclass(frozen=True)
class Infection:
    """What the weak-mutation run of one survivor found."""

    # "infected": the two expressions differed in a run; "not infected": they never did in any
    # preset's full run; "no probe": the operator changes no single expression, counted as
    # infected; "probe failed": the probing copy did not run to the end (counted as infected).
    verdict: str
    detail: str = ""
    seconds: float = 0.0

    @property
    def counts_as_infected(self) -> bool:
        """Whether the survivor counts as one whose change the presets' runs carry."""
        return self.verdict != NOT_INFECTED


INFECTED, NOT_INFECTED, NO_PROBE, PROBE_FAILED = (
    "infected",
    "not infected",
    "no probe",
    "probe failed",
)


def probe_source(mutant: Mutant, spec_dir: Path = SPEC_DIR) -> str | None:
    """The mutant's module with its mutated expression probed, or None when the mutation is not
    the replacement of one expression."""
    original_text = (spec_dir / mutant.module).read_text(encoding="utf-8")
    original = ast.parse(original_text)
    mutated = ast.parse(mutated_source(mutant, spec_dir))
    found = _changed_expression(original, mutated)
    if found is None:
        return None
    parent, field, index, before, after = found
    if any(isinstance(node, _NOT_IN_LAMBDA) for node in ast.walk(before)):
        return None  # inside a lambda these would mean something else
    call = ast.Call(
        func=ast.Name(_PROBE, ast.Load()),
        args=[
            ast.Lambda(_no_arguments(), before),
            ast.Lambda(_no_arguments(), after),
            ast.Constant(mutant.operator == _ZERO_ITERATION),
        ],
        keywords=[],
    )
    if index is None:
        setattr(parent, field, call)
    else:
        getattr(parent, field)[index] = call
    probe_tree = ast.parse(_PROBE_SOURCE)
    body = original.body
    insert_at = sum(1 for _ in _leading_docstring_and_futures(body))
    original.body = body[:insert_at] + probe_tree.body + body[insert_at:]
    return ast.unparse(ast.fix_missing_locations(original))


def _leading_docstring_and_futures(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for index, statement in enumerate(body):
        is_docstring = (
            index == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        )
        is_future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        if not (is_docstring or is_future):
            return
        yield statement


def _no_arguments() -> ast.arguments:
    return ast.arguments(
        posonlyargs=[],
        args=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


Found = tuple[ast.AST, str, int | None, ast.expr, ast.expr]


def _changed_expression(original: ast.AST, mutated: ast.AST) -> Found | None:
    """The expression to probe: the innermost that holds every difference between the two
    trees, or the call-free condition around it (`_masks`), as (parent, field, index, original
    expression, mutated expression); None when no expression holds them all (a statement
    added or removed, a decorator dropped)."""
    holder: Found | None = None
    frozen = False
    a, b = original, mutated
    while True:
        if type(a) is not type(b) or _scalar_fields(a) != _scalar_fields(b):
            return holder
        differing = list(_differing_children(a, b))
        if len(differing) != 1:
            return holder  # the node itself differs (a list grew or shrank), or several children
        field, index, x, y = differing[0]
        if not frozen:
            if holder is not None and holder[3] is a and _masks(a):
                frozen = True  # the enclosing condition's value decides; probe it whole
            else:
                holder = _holder(a, field, index, x, y, holder)
        a, b = x, y


def _masks(parent: ast.AST) -> bool:
    """Whether `parent`, the expression probed so far, folds its operands into a truth value
    with no call inside (a boolean operator, a negation, a comparison): a changed operand that
    leaves the truth value as it was changes nothing (`a and b` with `b` false), so the probe
    stays at `parent`, the condition as a whole. Calls are left out: the probe evaluates its
    expression twice, which must not run a step's side effects twice."""
    folds = isinstance(parent, (ast.BoolOp, ast.Compare)) or (
        isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    )
    return folds and not any(isinstance(node, ast.Call) for node in ast.walk(parent))


def _differing_children(
    a: ast.AST, b: ast.AST
) -> Iterator[tuple[str, int | None, ast.AST, ast.AST]]:
    """The children of two nodes of one type that differ; a child list of another length counts
    as a difference of the node itself (reported as two, so no single child is taken)."""
    for field, value in ast.iter_fields(a):
        other = getattr(b, field)
        if isinstance(value, list):
            if len(value) != len(other):
                yield field, None, a, b
                yield field, None, a, b
                continue
            for index, (x, y) in enumerate(zip(value, other, strict=True)):
                if isinstance(x, ast.AST) and isinstance(y, ast.AST) and ast.dump(x) != ast.dump(y):
                    yield field, index, x, y
        elif (
            isinstance(value, ast.AST)
            and isinstance(other, ast.AST)
            and ast.dump(value) != ast.dump(other)
        ):
            yield field, None, value, other


def _holder(
    parent: ast.AST, field: str, index: int | None, a: ast.AST, b: ast.AST, outer: Found | None
) -> Found | None:
    """The innermost expression around a difference: this child when a call may stand in its
    place (an expression that is read, not a slice, not a piece of an f-string or a pattern),
    else the enclosing one."""
    replaceable = (
        isinstance(a, ast.expr)
        and isinstance(b, ast.expr)
        and not isinstance(a, ast.Slice)
        and isinstance(getattr(a, "ctx", ast.Load()), ast.Load)
        and not isinstance(parent, (ast.JoinedStr, ast.pattern))
    )
    if replaceable:
        assert isinstance(a, ast.expr) and isinstance(b, ast.expr)
        return (parent, field, index, a, b)
    return outer


def _scalar_fields(node: ast.AST) -> tuple[object, ...]:
    return tuple(
        value for _, value in ast.iter_fields(node) if not isinstance(value, (ast.AST, list))
    )


def infection(
    mutant: Mutant,
    presets: tuple[PresetBudget, ...],
    deadline_s: float,
    spec_dir: Path = SPEC_DIR,
) -> Infection:
    """Run the presets on the probed copy of a surviving mutant and say whether the mutated
    expression ever evaluated to another value than the original."""
    text = probe_source(mutant, spec_dir)
    if text is None:
        return Infection(NO_PROBE, "the mutation changes no single expression")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="groupspec-infection-") as scratch:
        log = Path(scratch) / "infection.log"
        run = check_copy(
            presets,
            mutant=ProbedMutant(mutant, text),
            deadline_s=deadline_s,
            spec_dir=spec_dir,
            environment={INFECTION_LOG: str(log)},
        )
        found = log.read_text(encoding="utf-8").splitlines()[0] if log.exists() else None
    seconds = time.monotonic() - started
    if found is not None:
        return Infection(INFECTED, found, seconds)
    return replace(_uninfected_or_failed(run, len(presets)), seconds=seconds)


def _uninfected_or_failed(run: WorkerRun, expected: int) -> Infection:
    finished = [record for record in run.records if record.outcome == PASS]
    if len(finished) == expected and not run.timed_out:
        return Infection(NOT_INFECTED, f"{expected} presets ran to the end with equal values")
    problem = run.records[-1].error if run.records and run.records[-1].error else run.stderr
    return Infection(PROBE_FAILED, (problem or "the probing copy did not finish")[-200:])


__all__ = [
    "INFECTED",
    "INFECTION_LOG",
    "NOT_INFECTED",
    "NO_PROBE",
    "PROBE_FAILED",
    "Infection",
    "ProbedMutant",
    "infection",
    "probe_source",
]
