"""Where each catalog rule is implemented: found by reading the spec's source, not by hand.

Every `step.fire("rule.id")` call is located with `ast`, so the rule → function index in
docs/spec.md is generated and cannot drift from the code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import groupspec.spec as spec_package
from groupspec.spec.rules import RULES, Rule


@dataclass(frozen=True)
class RulePlace:
    """A place in the spec's source where a rule fires."""

    module: str
    function: str
    line: int


def rule_places() -> dict[str, list[RulePlace]]:
    """For every rule id, the functions (module, name, line) that fire it."""
    places: dict[str, list[RulePlace]] = {}
    package_dir = Path(spec_package.__file__).parent
    for path in sorted(package_dir.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                for rule_id in _fired_rule_ids(node):
                    places.setdefault(rule_id, []).append(
                        RulePlace(path.name, function.name, node.lineno)
                    )
    return places


def _fired_rule_ids(node: ast.AST) -> list[str]:
    """Rule ids in a `<x>.fire(...)` call, including `fire("a" if c else "b")`."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "fire"
    ):
        return []
    if not node.args:
        return []
    return [
        c.value
        for c in ast.walk(node.args[0])
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    ]


def rule_index_markdown() -> str:
    """The rule → place table of docs/spec.md, grouped by the first part of the rule id."""
    places = rule_places()
    lines: list[str] = []
    current_area = ""
    for rule in RULES:
        area = rule.rule_id.split(".", 1)[0]
        if area != current_area:
            current_area = area
            lines += [
                "",
                f"### {area}",
                "",
                "| rule | reference | implemented in | what it does |",
                "|---|---|---|---|",
            ]
        lines.append(_row(rule, places.get(rule.rule_id, [])))
    return "\n".join(lines).lstrip("\n") + "\n"


def _row(rule: Rule, where: list[RulePlace]) -> str:
    functions = sorted({f"`spec/{p.module}` `{p.function}`" for p in where})
    located = "<br>".join(functions) if functions else "**not implemented**"
    marker = " *(defensive)*" if rule.defensive else ""
    return f"| `{rule.rule_id}`{marker} | {rule.section} | {located} | {rule.summary} |"
