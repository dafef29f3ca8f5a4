"""The spec and the impl call the same things by the same names.

A reader goes from a rule in docs/spec.md to the spec's handler and on to the impl (which cites
the rule, tests/test_rule_citations.py); that only works if both sides speak one vocabulary.
This test pins the part that can be compared mechanically: the request and response dataclasses
(class names, field names in order), the unions over them, and the module names. Any deliberate
difference is listed below with its reason.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from types import ModuleType

import groupspec.impl.requests as impl_requests
import groupspec.impl.responses as impl_responses
import groupspec.spec.requests as spec_requests
import groupspec.spec.responses as spec_responses

ROOT = Path(__file__).resolve().parent.parent

# Dataclasses only one side has, and why.
SPEC_ONLY_DATACLASSES = {
    # The spec's input: a request together with the ref its response goes to. The impl takes
    # them apart, `Coordinator.handle(ref, request)`.
    "Received": "spec input pairing a ref and a request; the impl's handle(ref, request)",
    # The spec's output: a body addressed to a ref. The impl hands (ref, body) to its respond
    # callback and keeps no such pair.
    "Response": "spec output pairing a ref and a body; the impl's respond(ref, body)",
}
IMPL_ONLY_DATACLASSES: dict[str, str] = {}

# Modules only one side has, and why. Every other module name exists on both sides.
SPEC_ONLY_MODULES = {
    "assignment": "the client-side assignment vocabulary (TopicPartition, Cluster, ...)",
    "invariants": "properties the model checker checks",
    "rules": "the rule catalog the impl cites by id",
    "member_ids": "which fields carry member ids, for tools that rename them (the impl never renames)",
    "step": "the relation machinery: one run of a handler, its choices and outcomes",
}
IMPL_ONLY_MODULES = {
    "clock": "wall-clock time; the spec's time is an argument",
    "policy": "the implementation-defined choices the spec enumerates with Step.choose",
    "runtime": "the mutable world handlers work on; the spec's is CoordinatorState plus Step",
    "timer_heap": "the deadline heap; the spec lists armed timers from the state",
}


def _dataclasses(*modules: ModuleType) -> dict[str, type]:
    found: dict[str, type] = {}
    for module in modules:
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def _field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _union_names(union: object) -> list[str]:
    return sorted(member.__name__ for member in typing.get_args(union))


def test_request_and_response_classes_have_the_same_names():
    spec = _dataclasses(spec_requests, spec_responses)
    impl = _dataclasses(impl_requests, impl_responses)
    assert set(spec) - set(impl) == set(SPEC_ONLY_DATACLASSES)
    assert set(impl) - set(spec) == set(IMPL_ONLY_DATACLASSES)


def test_request_and_response_classes_have_the_same_fields():
    spec = _dataclasses(spec_requests, spec_responses)
    impl = _dataclasses(impl_requests, impl_responses)
    different = {
        name: (_field_names(spec[name]), _field_names(impl[name]))
        for name in sorted(set(spec) & set(impl))
        if _field_names(spec[name]) != _field_names(impl[name])
    }
    assert not different, f"fields differ (spec, impl): {different}"


def test_each_class_lives_in_the_same_module_on_both_sides():
    for spec_module, impl_module in (
        (spec_requests, impl_requests),
        (spec_responses, impl_responses),
    ):
        spec = set(_dataclasses(spec_module)) - set(SPEC_ONLY_DATACLASSES)
        impl = set(_dataclasses(impl_module)) - set(IMPL_ONLY_DATACLASSES)
        assert spec == impl, spec_module.__name__


def test_the_unions_of_requests_and_response_bodies_agree():
    assert _union_names(spec_requests.Request) == _union_names(impl_requests.Request)
    assert _union_names(spec_responses.ResponseBody) == _union_names(impl_responses.ResponseBody)


def test_shared_constants_agree():
    assert spec_requests.GROUP_KEY_TYPE == impl_requests.GROUP_KEY_TYPE
    assert spec_responses.UNKNOWN_MEMBER_ID == impl_responses.UNKNOWN_MEMBER_ID
    assert spec_responses.NO_GENERATION == impl_responses.NO_GENERATION


def test_modules_have_the_same_names():
    spec = {path.stem for path in (ROOT / "spec").glob("*.py")} - {"__init__"}
    impl = {path.stem for path in (ROOT / "impl").glob("*.py")} - {"__init__"}
    assert spec - impl == set(SPEC_ONLY_MODULES)
    assert impl - spec == set(IMPL_ONLY_MODULES)
