"""One Kafka vocabulary, declared once, with no behaviour in it.

Requests, responses, error codes and group states live in `groupspec.vocabulary` (floor 0).
The specification and the implementation share those types and nothing else
(tests/test_layers.py keeps impl/ from importing spec/). These tests keep the vocabulary a
vocabulary: shapes and Kafka's fixed tables, never a second copy of a type elsewhere, and the
same module names on both sides so a reader goes from a rule in the spec to the impl's module
of the same name.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import types
import typing
from pathlib import Path

from groupspec.vocabulary import consumer_groups, errors, group_state, requests, responses

ROOT = Path(__file__).resolve().parent.parent
# consumer_groups: KIP-848's two APIs, outside REQUEST_TYPES until the server and oracle serve
# them (its docstring says why); still shapes only, declared once.
VOCABULARY = (requests, responses, errors, group_state, consumer_groups)

# The only public functions the vocabulary has: lookups in Kafka's fixed tables.
TABLE_LOOKUPS = {"append_error_to_response", "is_legal_transition"}

# Modules only one side has, and why. Every other module name exists on both sides.
SPEC_ONLY_MODULES = {
    "assignment": "the client-side assignment vocabulary (TopicPartition, Cluster, ...)",
    "invariants": "properties the model checker checks",
    "rules": "the rule catalog the impl cites by id",
    "member_ids": "which fields carry member ids, for tools that rename them (the impl never renames)",
    "step": "the relation machinery: one run of a handler, its choices and outcomes",
    "abstract_group": "the abstract group the coordinator refines (a checking device)",
    "refinement": "the refinement mapping's judge, run by the model checker",
}
IMPL_ONLY_MODULES = {
    "clock": "wall-clock time; the spec's time is an argument",
    "policy": "the implementation-defined choices the spec enumerates with Step.choose",
    "runtime": "the mutable world handlers work on; the spec's is CoordinatorState plus Step",
    "timer_heap": "the deadline heap; the spec lists armed timers from the state",
}


def test_the_vocabulary_holds_shapes_and_tables_only():
    for module in VOCABULARY:
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", module.__name__) != (
                module.__name__
            ):
                continue
            if isinstance(value, type):
                assert (
                    dataclasses.is_dataclass(value)
                    or issubclass(value, enum.Enum)
                    or issubclass(value, Exception)
                ), f"{module.__name__}.{name} is a class that is neither a message nor an error"
            elif isinstance(value, types.FunctionType):
                assert name in TABLE_LOOKUPS, f"{module.__name__}.{name} is behaviour"


def test_every_request_type_is_in_the_request_union_and_back():
    assert set(requests.REQUEST_TYPES) == set(typing.get_args(requests.Request))


def test_neither_side_declares_a_vocabulary_type_again():
    names = {
        name
        for module in VOCABULARY
        for name, value in vars(module).items()
        if isinstance(value, type) and value.__module__ == module.__name__
    }
    for folder in ("spec", "impl"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            again = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
            assert not again & names, f"{path.relative_to(ROOT)} declares {sorted(again & names)}"


def test_modules_have_the_same_names():
    spec = {path.stem for path in (ROOT / "spec").glob("*.py")} - {"__init__"}
    impl = {path.stem for path in (ROOT / "impl").glob("*.py")} - {"__init__"}
    assert spec - impl == set(SPEC_ONLY_MODULES)
    assert impl - spec == set(IMPL_ONLY_MODULES)
