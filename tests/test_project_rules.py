"""Project-level guarantees: the spec is standard-library only, its catalogs are complete."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import groupspec.spec.consumer.rules as consumer_rules_module
import groupspec.spec.rules as rules_module
from groupspec.coverage.rule_index import rule_places
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer.outcome import Effects
from groupspec.spec.consumer.rules import (
    CLIENT_COORDINATOR_MARKED_UNKNOWN,
    CONSUMER_RULES,
    ConsumerRule,
)
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS
from groupspec.spec.rules import JOIN_GROUP_CREATED, RULE_IDS, RULES, Rule
from groupspec.spec.step import Step, _Chooser

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


def _module_constants(module, rule_type):
    return [(name, value) for name, value in vars(module).items() if isinstance(value, rule_type)]


def test_each_rule_is_a_constant_named_after_its_id_and_listed_in_order():
    for module, rule_type, listed in (
        (rules_module, Rule, RULES),
        (consumer_rules_module, ConsumerRule, CONSUMER_RULES),
    ):
        constants = _module_constants(module, rule_type)
        for name, rule in constants:
            assert name == rule.rule_id.upper().replace(".", "_"), name
        assert tuple(rule for _, rule in constants) == listed


def test_fire_takes_only_a_rule_of_its_own_catalog():
    step = Step(CoordinatorConfig(), 0, _Chooser(()))
    step.fire(JOIN_GROUP_CREATED)
    assert step.rules == ["join.group_created"]
    for wrong in ("join.group_created", CLIENT_COORDINATOR_MARKED_UNKNOWN):
        with pytest.raises(KeyError):
            step.fire(wrong)  # type: ignore[arg-type]
    effects = Effects(frozenset(CONSUMER_RULES))
    effects.fire(CLIENT_COORDINATOR_MARKED_UNKNOWN)
    assert effects.rules == ["client.coordinator.marked_unknown"]
    for wrong in ("client.coordinator.marked_unknown", JOIN_GROUP_CREATED):
        with pytest.raises(KeyError):
            effects.fire(wrong)  # type: ignore[arg-type]
