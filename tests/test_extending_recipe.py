"""docs/extending.md, "Adding a request type", checked against the code.

The recipe is a numbered list of the files a new request type touches. Each file it names has a
check here that finds every request type of the vocabulary in the place the recipe says, so a
request type wired in some other way, or a recipe that forgets a place, fails; and the list
may name at most eight files. What the recipe says follows without an edit is checked too:
the codec, the trace format, the wire server, member ids and the vectors read the same entries.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from groupspec.conformance.differential import normalize_response
from groupspec.conformance.vector_codec import TYPES as VECTOR_TYPES
from groupspec.impl import coordinator as impl_coordinator
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.server.apis import Apis
from groupspec.impl.server.topics import TopicStore
from groupspec.oracle.trace.binding import Binding
from groupspec.oracle.trace.comparison import Bag, MemberId, default_comparable
from groupspec.spec import coordinator as spec_coordinator
from groupspec.spec.coordinator import GroupCoordinatorSpec
from groupspec.spec.member_ids import field_roles
from groupspec.spec.rules import RULES, Rule
from groupspec.vocabulary import requests, responses
from groupspec.vocabulary.errors import ErrorCode
from groupspec.wire import codec, group_apis, trace_format
from groupspec.wire.group_apis import GROUP_APIS, GroupApi

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "docs" / "extending.md"
HEADING = "## Adding a request type"
MAX_FILES = 8
REQUEST_TYPES = requests.REQUEST_TYPES


def recipe_files() -> list[str]:
    """The files the recipe's numbered list names, in order."""
    text = RECIPE.read_text(encoding="utf-8")
    section = text[text.index(HEADING) + len(HEADING) :]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^\d+\. \*\*`([^`]+)`\*\*", section, flags=re.MULTILINE)


def api_of(request_type: type) -> GroupApi:
    (api,) = [api for api in GROUP_APIS if request_type in api.request_types]
    return api


def names(module: types.ModuleType) -> set[str]:
    return {
        n
        for n, v in vars(module).items()
        if isinstance(v, type) and v.__module__ == module.__name__
    }


# -- what the spec's dispatch reaches -------------------------------------------------------


def spec_entry(request_type: type) -> Callable[..., object]:
    """The function the spec's dispatch hands a request of this type to."""
    level = spec_coordinator.COORDINATOR_LEVEL_HANDLERS
    return level.get(request_type) or spec_coordinator.GROUP_HANDLERS[request_type]


def reached(function: Callable[..., object]) -> Iterator[tuple[str, object]]:
    """(module, value) of every spec function and rule `function` names, following the spec's
    functions and the spec class's methods it calls, transitively."""
    seen: set[int] = set()
    pending: list[Callable[..., object]] = [function]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        module = getattr(current, "__module__", "")
        yield module, current
        code = getattr(current, "__code__", None)
        if code is None:
            continue
        codes = [code]
        while codes:
            one = codes.pop()
            codes.extend(c for c in one.co_consts if isinstance(c, types.CodeType))
            for name in one.co_names:
                value = getattr(current, "__globals__", {}).get(name)
                if value is None:
                    value = getattr(GroupCoordinatorSpec, name, None)
                if isinstance(value, Rule):
                    yield module, value
                elif isinstance(value, types.FunctionType) and value.__module__.startswith(
                    "groupspec.spec"
                ):
                    pending.append(value)


def own_rules(request_type: type) -> set[Rule]:
    """The rules the spec fires for this request type beyond the coordinator checks."""
    return {
        value
        for _, value in reached(spec_entry(request_type))
        if isinstance(value, Rule) and not value.rule_id.startswith("coordinator.")
    }


def handler_module(request_type: type) -> str:
    """The short name of the impl module whose function serves this request type."""
    handler = impl_coordinator.REQUEST_HANDLERS[request_type]
    return handler.__module__.rsplit(".", 1)[1]


# -- one check per file of the recipe -------------------------------------------------------


def check_requests(request_type: type) -> None:
    assert request_type.__name__ in names(requests)
    assert request_type in typing.get_args(requests.Request)
    assert dataclasses.is_dataclass(request_type)
    field_roles(request_type)  # its annotations resolve, so member ids can be found


def check_responses(request_type: type) -> None:
    response_type = api_of(request_type).response_type
    assert response_type.__name__ in names(responses)
    assert response_type in typing.get_args(responses.ResponseBody)
    field_roles(response_type)


def check_rules(request_type: type) -> None:
    rules = own_rules(request_type)
    assert rules, f"the spec fires no rule of its own for {request_type.__name__}"
    assert rules <= set(RULES)


def check_spec_module(request_type: type) -> None:
    module = handler_module(request_type)
    assert module != "coordinator", f"{request_type.__name__} is served in impl/coordinator.py"
    here = f"groupspec.spec.{module}"
    assert any(m == here and isinstance(v, Rule) for m, v in reached(spec_entry(request_type))), (
        f"no rule of {request_type.__name__} is fired in spec/{module}.py"
    )


def check_spec_dispatch(request_type: type) -> None:
    level = request_type in spec_coordinator.COORDINATOR_LEVEL_HANDLERS
    group = request_type in spec_coordinator.GROUP_HANDLERS
    assert level != group, f"{request_type.__name__} must be dispatched exactly once"
    if group:
        assert request_type in spec_coordinator.ERROR_RESPONSES


def check_impl_module(request_type: type) -> None:
    module = handler_module(request_type)
    assert module != "coordinator"
    source = (ROOT / "impl" / f"{module}.py").read_text(encoding="utf-8")
    cited = set(re.findall(r"# rule: ([a-z_.0-9]+)", source))
    assert cited & {rule.rule_id for rule in own_rules(request_type)}, (
        f"impl/{module}.py cites none of the rules of {request_type.__name__}"
    )


def check_impl_dispatch(request_type: type) -> None:
    assert request_type in impl_coordinator.REQUEST_HANDLERS


def check_group_apis(request_type: type) -> None:
    api = api_of(request_type)
    assert group_apis.BY_KEY[api.key] is api
    assert api.request_class.__name__ == f"{api.name}Request"
    assert api.response_class.__name__ == f"{api.name}Response"
    low, high = api.versions
    assert 0 <= low <= high


CHECKS: dict[str, Callable[[type], None]] = {
    "vocabulary/requests.py": check_requests,
    "vocabulary/responses.py": check_responses,
    "spec/rules.py": check_rules,
    "spec/<module>.py": check_spec_module,
    "spec/coordinator.py": check_spec_dispatch,
    "impl/<module>.py": check_impl_module,
    "impl/coordinator.py": check_impl_dispatch,
    "wire/group_apis.py": check_group_apis,
}


def recipe_problems(files: list[str]) -> list[str]:
    """What is wrong with a recipe naming `files` (nothing, for a good one)."""
    problems = []
    if not 0 < len(files) <= MAX_FILES:
        problems.append(f"{len(files)} files, at most {MAX_FILES}")
    if len(set(files)) != len(files):
        problems.append("a file named twice")
    if set(files) != set(CHECKS):
        problems.append(f"no check for {sorted(set(files) - set(CHECKS))}")
        problems.append(f"not in the recipe: {sorted(set(CHECKS) - set(files))}")
    problems += [
        f"{file} does not exist"
        for file in files
        if "<" not in file and not (ROOT / file).is_file()
    ]
    return problems


def test_the_recipe_names_at_most_eight_files_each_with_its_check():
    assert recipe_problems(recipe_files()) == []


def test_a_ninth_file_or_a_forgotten_place_is_refused():
    files = recipe_files()
    assert recipe_problems([*files, "wire/codec.py"])
    assert recipe_problems(files[:-1])


@pytest.mark.parametrize("file", sorted(CHECKS))
@pytest.mark.parametrize("request_type", REQUEST_TYPES, ids=lambda t: t.__name__)
def test_every_request_type_is_in_each_place_the_recipe_names(file, request_type):
    CHECKS[file](request_type)


def test_a_request_type_missing_from_a_place_is_found(monkeypatch):
    monkeypatch.delitem(impl_coordinator.REQUEST_HANDLERS, requests.DeleteGroupsRequest)
    with pytest.raises((AssertionError, KeyError)):
        check_impl_dispatch(requests.DeleteGroupsRequest)
    monkeypatch.delitem(spec_coordinator.GROUP_HANDLERS, requests.HeartbeatRequest)
    with pytest.raises(AssertionError):
        check_spec_dispatch(requests.HeartbeatRequest)


def test_a_handler_that_fires_no_rule_of_its_own_is_found(monkeypatch):
    def silent(step, state, ref, request):
        return state

    monkeypatch.setitem(spec_coordinator.GROUP_HANDLERS, requests.HeartbeatRequest, silent)
    with pytest.raises(AssertionError, match="no rule of its own"):
        check_rules(requests.HeartbeatRequest)


# -- what the recipe says follows without an edit --------------------------------------------


def test_every_response_type_answers_exactly_one_api():
    answered = [api.response_type for api in GROUP_APIS]
    assert sorted(answered, key=str) == sorted(set(answered), key=str)
    assert set(answered) == set(typing.get_args(responses.ResponseBody))
    produced = [t for api in GROUP_APIS for t in api.request_types]
    assert sorted(produced, key=str) == sorted(REQUEST_TYPES, key=str)


@pytest.mark.parametrize("api", GROUP_APIS, ids=lambda api: api.name)
def test_the_codec_the_trace_format_and_the_server_follow_the_entry(api):
    assert codec.MESSAGES[api.key] == (api.request_class, api.response_class)
    assert codec.SUPPORTED_VERSIONS[api.key] == api.versions
    assert trace_format.API_NAMES[api.key] == api.name
    apis = Apis(lambda respond: Coordinator(respond=respond), TopicStore(), "127.0.0.1", 9092)
    assert api.key in apis.handlers


@pytest.mark.parametrize("request_type", REQUEST_TYPES, ids=lambda t: t.__name__)
def test_the_vectors_know_every_request_and_response_type(request_type):
    assert VECTOR_TYPES[request_type.__name__] is request_type
    response_type = api_of(request_type).response_type
    assert VECTOR_TYPES[response_type.__name__] is response_type


def test_the_differential_normal_form_reads_the_vocabulary_marks():
    members = (
        responses.JoinGroupResponseMember("b", None, b"2"),
        responses.JoinGroupResponseMember("a", "i", b"1"),
    )
    body = responses.JoinGroupResponse(
        ErrorCode.NONE, "a", 1, "consumer", "range", "a", False, members
    )
    normal = normalize_response(body, str.upper)
    assert normal == (
        "JoinGroupResponse",
        0,
        "A",
        1,
        "consumer",
        "range",
        "A",
        False,
        (("A", "i", b"1"), ("B", None, b"2")),
    )
    # A list that follows the request's order keeps it.
    leave = responses.LeaveGroupResponse(
        ErrorCode.NONE,
        (
            responses.LeaveGroupMemberResponse("b", None, ErrorCode.NONE),
            responses.LeaveGroupMemberResponse("a", None, ErrorCode.UNKNOWN_MEMBER_ID),
        ),
    )
    assert normalize_response(leave, str.upper)[2] == (("B", None, 0), ("A", None, 25))


def test_the_oracle_default_form_binds_member_ids_and_ignores_order_and_throttle():
    api = group_apis.BY_KEY[group_apis.JOIN_GROUP]
    members = (
        responses.JoinGroupResponseMember("spec-1", None, b"m1"),
        responses.JoinGroupResponseMember("spec-2", None, b"m2"),
    )
    expected = group_apis.response_body(
        (
            responses.JoinGroupResponse(
                ErrorCode.NONE, "spec-1", 3, "consumer", "range", "spec-1", False, members
            ),
        ),
        9,
    )
    observed = dict(expected, throttle_time_ms=70, member_id="uuid-1", leader="uuid-1")
    observed["members"] = [
        dict(expected["members"][1], member_id="uuid-2"),
        dict(expected["members"][0], member_id="uuid-1"),
    ]
    spec_side = default_comparable(api.key, 9, expected)
    seen_side = default_comparable(api.key, 9, observed)
    assert dict(spec_side)["member_id"] == MemberId("spec-1")
    assert isinstance(dict(spec_side)["members"], Bag)
    assert "throttle_time_ms" not in dict(spec_side)
    (binding,) = Binding().unify(spec_side, seen_side)
    assert binding.observed_spelling() == {"spec-1": "uuid-1", "spec-2": "uuid-2"}
    # Another generation is a difference; so is a member that is not the leader named leader.
    assert not list(
        Binding().unify(spec_side, default_comparable(api.key, 9, dict(observed, generation_id=4)))
    )
    assert not list(
        Binding().unify(spec_side, default_comparable(api.key, 9, dict(observed, leader="uuid-2")))
    )
    # Fields the version lacks are not compared: v0 has no protocol type.
    assert "protocol_type" not in dict(default_comparable(api.key, 0, expected))


@pytest.mark.parametrize("api", group_apis.CONSUMER_GROUP_APIS, ids=lambda api: api.name)
def test_kip848_entries_are_kept_apart_as_the_recipe_says(api):
    # Decoded and traced from their entry, advertised by serve (impl/server/consumer_groups.py
    # serves them), not read by the classic oracle, and their types outside the unions of
    # steps 1 and 2.
    assert codec.MESSAGES[api.key] == (api.request_class, api.response_class)
    assert trace_format.API_NAMES[api.key] == api.name
    assert codec.SUPPORTED_VERSIONS[api.key] == api.versions
    assert api.key not in group_apis.BY_KEY
    assert group_apis.CONSUMER_BY_KEY[api.key] is api
    assert api.request_class.__name__ == f"{api.name}Request"
    for kind in (*api.request_types, api.response_type):
        assert kind.__module__ == "groupspec.vocabulary.consumer_groups"
        assert kind not in REQUEST_TYPES
        assert kind not in typing.get_args(responses.ResponseBody)
