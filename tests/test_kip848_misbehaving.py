"""The KIP-848 world's misbehaving client (models/kip848_misbehaving.py, `misbehaving_client`):
each request no Kafka consumer sends is refused with its error and changes nothing, and
MisbehavingRefused catches a coordinator that accepts one."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_world_search import reachable_steps

from groupspec.checker.check import check
from groupspec.checker.model import Cut
from groupspec.models.kip848_misbehaving import OLD_COMMIT_VERSION, misbehaving_requests
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848 import ConsumerGroupCoordinatorSpec
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.requests import OffsetCommitRequest

MISBEHAVING = Kip848Parameters(
    consumers=1, assignor="range", misbehaving_client=True, check_convergence=False
)
# Each misbehaving request, the rule the coordinator fires for it.
RULES = {
    "misbehaving_join_without_subscription": "cg_heartbeat.invalid_request",
    "misbehaving_join_foreign_assignor": "cg_heartbeat.unsupported_assignor",
    "misbehaving_describe_empty_group_id": "cg_describe.invalid_group_id",
    "misbehaving_commit_v8": "cg_offset_commit.unsupported_version",
    "misbehaving_commit_to_unknown_group": "cg_offset_commit.unknown_group",
    "misbehaving_commit_v8_to_unknown_group": "cg_offset_commit.unknown_group_old_version",
}


def _refused_misbehaving_steps(world: Kip848World) -> dict[str, set[str]]:
    """The rules each misbehaving step fires in the world, once checked to be refused and to
    change nothing."""
    fired: dict[str, set[str]] = {}
    for state, step in reachable_steps(world):
        if step.action != "misbehaving":
            continue
        assert step.state == state and step.findings == (), step.label
        fired.setdefault(step.label, set()).update(step.rules)
    return fired


def test_every_misbehaving_request_is_refused_and_changes_nothing():
    world = Kip848World(MISBEHAVING)
    fired = _refused_misbehaving_steps(world)
    assert set(fired) == set(RULES)
    for label, rule in RULES.items():
        assert fired[label] == {rule}, label


def test_the_requests_depend_on_the_group():
    without_group = {what for what, _, _ in misbehaving_requests("g", None, ("t0",))}
    assert "commit_to_unknown_group" in without_group and "commit_v8" not in without_group
    (commit,) = [
        request
        for what, request, _ in misbehaving_requests("g", None, ("t0",))
        if what == "commit_v8_to_unknown_group"
    ]
    assert isinstance(commit, OffsetCommitRequest) and commit.api_version == OLD_COMMIT_VERSION


def test_the_misbehaving_client_is_off_by_default():
    assert not Kip848Parameters().misbehaving_client
    names = {p.name for p in Kip848World(replace(MISBEHAVING, misbehaving_client=False)).properties}
    assert "MisbehavingRefused" not in names
    assert "MisbehavingRefused" in {p.name for p in Kip848World(MISBEHAVING).properties}


class AcceptsOldCommits(ConsumerGroupCoordinatorSpec):
    """Reads every OffsetCommit as v9: a v8 commit at the member's epoch is accepted."""

    def step(self, state, event, now_ms):  # type: ignore[no-untyped-def]
        request = getattr(event, "request", None)
        if isinstance(request, OffsetCommitRequest):
            event = replace(event, request=replace(request, api_version=9))
        return super().step(state, event, now_ms)


class IgnoresServerAssignor(ConsumerGroupCoordinatorSpec):
    """Ignores the server assignor a heartbeat names: a join naming a foreign one is taken."""

    def step(self, state, event, now_ms):  # type: ignore[no-untyped-def]
        request = getattr(event, "request", None)
        if isinstance(request, ConsumerGroupHeartbeatRequest):
            event = replace(event, request=replace(request, server_assignor=None))
        return super().step(state, event, now_ms)


@pytest.mark.parametrize("faulty", [AcceptsOldCommits, IgnoresServerAssignor])
def test_misbehaving_refused_catches_a_coordinator_that_accepts_one(faulty):
    coordinator = faulty(MISBEHAVING.coordinator_config())
    world = Kip848World(MISBEHAVING, coordinator=coordinator)
    world.properties = tuple(p for p in world.properties if p.name == "MisbehavingRefused")
    result = check(world)
    assert (result.verdict, result.failed) == ("fail", ("MisbehavingRefused",))
    correct = Kip848World(MISBEHAVING)
    correct.properties = tuple(p for p in correct.properties if p.name == "MisbehavingRefused")
    assert check(correct).verdict == "pass"


def test_a_commit_meets_the_group_the_admin_deleted():
    world = load_model("kip848-misbehaving-1").model
    assert isinstance(world, Kip848World)
    deleted = next(
        state
        for state, _ in reachable_steps(world)
        if state.deletes == 0 and state.coordinator.group("g") is None
    )
    fired = {
        step.label: step.rules
        for step in world.transitions(deleted)
        if not isinstance(step, Cut) and step.action == "misbehaving"
    }
    assert fired["misbehaving_commit_to_unknown_group"] == ("cg_offset_commit.unknown_group",)
    assert fired["misbehaving_commit_v8_to_unknown_group"] == (
        "cg_offset_commit.unknown_group_old_version",
    )


def test_a_kafka_39_coordinator_refuses_the_v1_join_and_the_other_joins_are_v0():
    world = Kip848World(replace(MISBEHAVING, kafka_version="3.9", coordinator_member_ids=True))
    fired = _refused_misbehaving_steps(world)
    assert fired["misbehaving_join_unsupported_version"] == {"cg_heartbeat.unsupported_version"}
    assert {label: fired[label] for label in RULES} == {
        label: {rule} for label, rule in RULES.items()
    }
    requests = dict(
        (what, request) for what, request, _ in misbehaving_requests("g", None, ("t0",), 0)
    )
    assert requests["join_unsupported_version"].api_version == 1
    assert requests["join_without_subscription"].api_version == 0
    assert requests["join_foreign_assignor"].member_id == ""
