"""The consumer-protocol oracle on DeleteGroups and ListGroups (oracle/trace/kip848.py): a
DeleteGroups naming only consumer-protocol groups and a ListGroups of consumer groups only are
judged against spec/kip848/groups.py, on traces the specification writes; a wrong answer
diverges; groups of other clients in a ListGroups answer are left out; a DeleteGroups naming a
group no heartbeat named stays with the classic oracle."""

from __future__ import annotations

from dataclasses import replace

from test_oracle_kip848 import Run, beat, join
from test_oracle_kip848_offsets import send

from groupspec.oracle.trace.validate import validate_trace
from groupspec.vocabulary.consumer_groups import LEAVE_GROUP_MEMBER_EPOCH
from groupspec.vocabulary.requests import DeleteGroupsRequest, ListGroupsRequest
from groupspec.wire.group_apis import DELETE_GROUPS, LIST_GROUPS
from groupspec.wire.trace_format import RESPONSE


def deleting(run: Run) -> None:
    """A joins group g; g is deleted while A is in it, after A left, and once gone."""
    a = run.send(0, "c1:1", join("A"))
    a = run.send(100, "c1:1", beat("A", a["member_epoch"], a))
    send(run, 200, "c1:2", DeleteGroupsRequest(("g",)))
    run.send(300, "c1:1", beat("A", LEAVE_GROUP_MEMBER_EPOCH, None))
    send(run, 400, "c1:2", DeleteGroupsRequest(("g",)))
    send(run, 500, "c1:2", DeleteGroupsRequest(("g",)))


def test_deleting_a_consumer_group_passes_with_every_event_judged(tmp_path):
    run = Run()
    deleting(run)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    assert verdict.judged_fraction == 1.0
    assert {
        "cg_delete_groups.non_empty",
        "cg_delete_groups.deleted",
        "cg_delete_groups.unknown_group",
        "cg_record.group_tombstones",
    } <= verdict.rules


def test_a_non_empty_group_answered_as_deleted_is_a_divergence(tmp_path):
    run = Run()
    deleting(run)
    first = next(
        i
        for i, e in enumerate(run.events)
        if e.direction == RESPONSE and e.api_key == DELETE_GROUPS
    )
    body = run.events[first].body
    deleted = {**body, "results": [{**r, "error_code": 0} for r in body["results"]]}
    run.events[first] = replace(run.events[first], body=deleted)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    assert verdict.divergences[0].api == "DeleteGroups"


def test_deleting_a_group_no_heartbeat_named_is_left_to_the_classic_oracle(tmp_path):
    run = Run()
    send(run, 0, "c1:2", DeleteGroupsRequest(("never-seen",)))
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not any(rule.startswith("cg_delete_groups.") for rule in verdict.rules)


def listing(run: Run) -> None:
    """A joins group g; consumer groups are listed: all, the Empty ones, the Stable ones."""
    a = run.send(0, "c1:1", join("A"))
    run.send(100, "c1:1", beat("A", a["member_epoch"], a))
    for at, states in ((200, ()), (300, ("Empty",)), (400, ("Stable",))):
        send(run, at, "c1:2", ListGroupsRequest(states, ("consumer",)))


def _list_responses(run: Run) -> list[int]:
    return [
        i for i, e in enumerate(run.events) if e.direction == RESPONSE and e.api_key == LIST_GROUPS
    ]


def test_listing_consumer_groups_passes_and_ignores_other_clients_groups(tmp_path):
    run = Run()
    listing(run)
    other = {"group_id": "other", "protocol_type": "consumer", "group_state": "Empty"}
    for i in _list_responses(run):
        body = run.events[i].body
        groups = [*body["groups"], {**other, "group_type": "consumer"}]
        run.events[i] = replace(run.events[i], body={**body, "groups": groups})
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    assert verdict.judged_fraction == 1.0
    assert {"cg_list_groups.listed", "cg_list_groups.filtered_out"} <= verdict.rules


def test_a_group_listed_in_the_wrong_state_is_a_divergence(tmp_path):
    run = Run()
    listing(run)
    first = _list_responses(run)[0]
    body = run.events[first].body
    groups = [{**g, "group_state": "Empty"} for g in body["groups"]]
    run.events[first] = replace(run.events[first], body={**body, "groups": groups})
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    assert verdict.divergences[0].api == "ListGroups"
