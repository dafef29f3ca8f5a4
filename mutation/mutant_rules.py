"""Which spec rules a line of spec/ belongs to, for telling where a surviving mutant lives.

A rule is implemented where a handler fires it (`coverage.rule_index.rule_places`, both
sides). A line belongs to the innermost function around it that fires any rule, and to every
rule that function fires; a helper that fires none belongs to no rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from groupspec.coverage.rule_index import SIDES, rule_places

from .mutants import SPEC_DIR


@dataclass(frozen=True)
class RuleSite:
    """The function around a line (None at module level) and the rules it fires."""

    function: str | None
    rules: tuple[str, ...]


@dataclass(frozen=True)
class _Function:
    name: str
    first: int
    last: int


class RuleLocator:
    """Finds the rule-firing function around a line of a spec module (paths relative to spec/)."""

    def __init__(self, spec_dir: Path = SPEC_DIR) -> None:
        self._spec_dir = spec_dir
        self._fires: dict[str, list[tuple[int, str]]] = {}
        for side in SIDES:
            for rule_id, places in rule_places(side).items():
                for place in places:
                    self._fires.setdefault(place.module, []).append((place.line, rule_id))
        self._functions: dict[str, list[_Function]] = {}

    def site(self, module: str, line: int) -> RuleSite:
        """The innermost function around `line` that fires a rule, and its rules (otherwise
        the innermost function and no rules)."""
        around = sorted(
            (f for f in self._functions_of(module) if f.first <= line <= f.last),
            key=lambda f: f.last - f.first,
        )
        fires = self._fires.get(module, [])
        for function in around:
            rules = sorted({rule for at, rule in fires if function.first <= at <= function.last})
            if rules:
                return RuleSite(function.name, tuple(rules))
        return RuleSite(around[0].name if around else None, ())

    def _functions_of(self, module: str) -> list[_Function]:
        if module not in self._functions:
            path = self._spec_dir / module
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            self._functions[module] = [
                _Function(node.name, node.lineno, node.end_lineno or node.lineno)
                for node in ast.walk(tree)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        return self._functions[module]
