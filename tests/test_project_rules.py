"""Project-level guarantees: the spec is standard-library only, its catalogs are complete."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from groupspec.coverage.rule_index import rule_places
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS
from groupspec.spec.rules import RULE_IDS, RULES

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"


def _imported_top_level_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_spec_imports_only_the_standard_library():
    paths = sorted(SPEC_DIR.rglob("*.py"))
    assert any(path.parent.name == "consumer" for path in paths)
    for path in paths:
        outside = {
            m
            for m in _imported_top_level_modules(path)
            if m not in sys.stdlib_module_names and m != "__future__"
        }
        assert not outside, f"{path.name} imports {sorted(outside)}"


def test_every_catalog_rule_is_implemented_somewhere():
    places = rule_places()
    missing = [rule.rule_id for rule in RULES if rule.rule_id not in places]
    assert not missing


def test_every_fired_rule_is_in_the_catalog():
    assert set(rule_places()) <= RULE_IDS


def test_rule_ids_are_unique():
    ids = [rule.rule_id for rule in RULES]
    assert len(ids) == len(set(ids))


def test_property_names_are_unique():
    names = [p.name for p in INVARIANTS] + [p.name for p in ACTION_PROPERTIES]
    assert len(names) == len(set(names))
