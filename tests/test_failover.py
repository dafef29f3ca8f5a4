"""Coordinator failover (reference §1, §2.0, §6): unloading an offsets partition and replaying it."""

from __future__ import annotations

import pytest
from coordinator_driver import (
    COMPLETING,
    EMPTY,
    GROUP,
    PREPARING,
    STABLE,
    SUB_T,
    SUB_TU,
    Driver,
    assignment,
    error_of,
    join_request,
    response_to,
)

from groupspec.spec import (
    CoordinatorConfig,
    GroupCoordinatorSpec,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    StartLoading,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    OffsetFetchPartitionResponse,
    SyncGroupResponse,
)


def group_on_partition(spec, partition, *, same):
    """A group id other than GROUP whose offsets partition is (or is not) `partition`."""
    for index in range(10_000):
        candidate = f"other-{index}"
        if (spec.partition_for(candidate) == partition) == same:
            return candidate
    raise AssertionError("no such group id")


def commit_succeeded(outcome, ref):
    errors = {p.error_code for p in response_to(outcome, ref).partitions}
    return ErrorCode.COORDINATOR_NOT_AVAILABLE not in errors


def group_requests(member_id, generation):
    tp = (OffsetCommitPartition("t", 0, 1),)
    return {
        "join-new": join_request("c"),
        "join-known": join_request("c", member_id),
        "sync": SyncGroupRequest(GROUP, generation, member_id),
        "heartbeat": HeartbeatRequest(GROUP, generation, member_id),
        "leave": LeaveGroupRequest(GROUP, (MemberIdentity(member_id),)),
        "commit": OffsetCommitRequest(GROUP, tp, generation, member_id),
        "fetch": OffsetFetchRequest(GROUP, (TopicPartition("t", 0),)),
    }


# -- Unload ----------------------------------------------------------------------------------------


def test_unload_answers_parked_joins_of_a_rebalancing_group():
    d = Driver()
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    _, ref_a, _ = d.join("a", a, at=10_000)
    assert d.group.state is PREPARING
    out = d.unload()
    assert "partition.unloaded_parked_join_answered" in out.rules
    assert [(r.ref, r.body) for r in out.responses] == [
        (ref_a, JoinGroupResponse(ErrorCode.NOT_COORDINATOR, member_id=a))
    ]
    assert d.state.group(GROUP) is None
    assert d.partition in d.state.unowned_partitions
    assert all(getattr(e, "group_id", None) != GROUP for e in d.armed())


def test_unload_answers_parked_joins_of_an_initial_rebalance():
    d = Driver()
    a, ref_a, _ = d.join("a")
    out = d.unload()
    assert [(r.ref, r.body) for r in out.responses] == [
        (ref_a, JoinGroupResponse(ErrorCode.NOT_COORDINATOR, member_id=a))
    ]
    assert d.state.group(GROUP) is None


def test_unload_answers_parked_syncs_of_a_completing_group():
    d = Driver()
    _, b = d.form_completing(dict(client="a"), dict(client="b"))
    sync_ref, out = d.sync(b)
    assert response_to(out, sync_ref) is None
    out = d.unload()
    assert "partition.unloaded_parked_sync_answered" in out.rules
    assert [(r.ref, r.body) for r in out.responses] == [
        (sync_ref, SyncGroupResponse(ErrorCode.NOT_COORDINATOR))
    ]
    assert d.state.group(GROUP) is None


def test_unload_of_a_stable_group_sends_nothing():
    d = Driver()
    d.form_stable(dict(client="a"), dict(client="b"))
    out = d.unload()
    assert out.responses == ()
    assert d.state.group(GROUP) is None


def test_unload_leaves_groups_of_other_partitions_alone():
    d = Driver()
    d.form_stable(dict(client="a"), dict(client="b"))
    other = group_on_partition(d.spec, d.partition, same=False)
    d.ask("admin", OffsetCommitRequest(other, (OffsetCommitPartition("t", 0, 3),)))
    other_before = d.state.group(other)
    d.unload()
    assert d.state.group(other) == other_before
    assert d.fetch_all(other, metadata=True) == {("t", 0): (3, "")}


@pytest.mark.parametrize(
    "api", ["join-new", "join-known", "sync", "heartbeat", "leave", "commit", "fetch"]
)
def test_requests_after_unload_get_not_coordinator(api):
    d = Driver()
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    d.unload()
    before = d.state
    body = d.ask("late", group_requests(a, 1)[api])
    assert error_of(body) is ErrorCode.NOT_COORDINATOR
    assert d.state == before


# -- StartLoading ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api", "expected"),
    [
        ("join-new", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        ("join-known", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        ("leave", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        ("commit", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        ("fetch", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        # Kafka's remaps while loading (reference §2.0).
        ("heartbeat", ErrorCode.NONE),
        ("sync", ErrorCode.REBALANCE_IN_PROGRESS),
    ],
)
def test_requests_while_loading(api, expected):
    d = Driver()
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    d.unload()
    out = d.step(StartLoading(d.partition))
    assert "partition.loading_started" in out.rules
    assert d.state.group(GROUP) is None
    before = d.state
    body = d.ask("early", group_requests(a, 1)[api])
    assert error_of(body) is expected
    assert d.state == before


# -- FinishLoading ----------------------------------------------------------------------------------


def test_stable_group_comes_back_stable_with_its_generation_leader_and_assignments():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b", instance="i-b"))
    before = d.group
    out = d.reload(at=50_000)
    assert "partition.loaded" in out.rules
    group = d.group
    assert group.state is STABLE
    assert group.generation_id == before.generation_id == 1
    assert group.leader_id == a
    assert group.protocol_type == "consumer"
    assert group.protocol_name == "range"
    assert d.member_ids() == {a, b}
    assert group.member(b).group_instance_id == "i-b"
    assert {m.member_id: m.assignment for m in group.members} == {
        a: assignment(a),
        b: assignment(b),
    }
    for member in group.members:
        assert d.armed()[HeartbeatExpired(GROUP, member.member_id)] == 50_000 + 10_000
    # The members carry on where they left off.
    ref, out = d.sync(a, generation=1)
    assert response_to(out, ref) == SyncGroupResponse(
        ErrorCode.NONE, "consumer", "range", assignment(a)
    )
    body = d.ask("b", HeartbeatRequest(GROUP, 1, b, group_instance_id="i-b"))
    assert body == HeartbeatResponse(ErrorCode.NONE)


def test_empty_group_comes_back_empty():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    d.ask("x", LeaveGroupRequest(GROUP, (MemberIdentity(a), MemberIdentity(b))))
    assert d.group.state is EMPTY
    generation = d.group.generation_id
    d.reload()
    group = d.group
    assert group.state is EMPTY
    assert group.members == ()
    assert group.generation_id == generation == 2
    assert group.protocol_name is None


@pytest.mark.parametrize("phase", ["preparing", "completing"])
def test_rebalancing_group_comes_back_stable_at_last_stored_generation(phase):
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    # b rejoins with a changed subscription: a rebalance starts (and may reach Completing at 2).
    d.join("b", b, protocols=(JoinGroupProtocol("range", SUB_TU),), at=10_000)
    d.join("c", at=10_001)
    if phase == "completing":
        d.join("a", a, at=10_002)
        assert d.group.state is COMPLETING
        assert d.group.generation_id == 2
    else:
        assert d.group.state is PREPARING
    d.reload(at=20_000)
    group = d.group
    assert group.state is STABLE
    assert group.generation_id == 1
    assert group.leader_id == a
    assert group.protocol_name == "range"
    assert d.member_ids() == {a, b}
    assert group.member(b).metadata_for("range") == SUB_T
    assert {m.member_id: m.assignment for m in group.members} == {
        a: assignment(a),
        b: assignment(b),
    }
    assert group.join_timer is None
    assert JoinTimerExpired(GROUP) not in d.armed()


def test_simple_group_comes_back():
    d = Driver()
    d.ask("admin", OffsetCommitRequest(GROUP, (OffsetCommitPartition("t", 0, 7, 3, "meta"),)))
    stored = d.group.offset(TopicPartition("t", 0))
    d.reload()
    group = d.group
    assert group.state is EMPTY
    assert group.protocol_type is None
    assert group.generation_id == 0
    assert group.offset(TopicPartition("t", 0)) == stored
    body = d.ask("fetcher", OffsetFetchRequest(GROUP, (TopicPartition("t", 0),)))
    assert body.partitions == (OffsetFetchPartitionResponse("t", 0, 7, 3, "meta", ErrorCode.NONE),)
    body = d.ask("admin", OffsetCommitRequest(GROUP, (OffsetCommitPartition("t", 0, 8),)))
    assert error_of(body) is ErrorCode.NONE


def test_every_acknowledged_offset_is_restored():
    d = Driver()
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    simple = group_on_partition(d.spec, d.partition, same=True)
    failing = GroupCoordinatorSpec(
        CoordinatorConfig(write_failures=(ErrorCode.NOT_ENOUGH_REPLICAS,))
    )
    too_large = "x" * (d.spec.config.offset_metadata_max_bytes + 1)
    member = (1, a)
    no_member = (-1, "")
    plan = [  # group, (generation, member id), partitions, whether the append succeeds
        (GROUP, member, [("t", 0, 5, "first")], True),
        (GROUP, member, [("t", 1, 3, "")], True),
        (GROUP, member, [("t", 0, 9, "overwrite")], True),
        (GROUP, member, [("t", 1, 100, "lost")], False),
        (GROUP, member, [("t", 2, 1, None), ("t", 3, 1, too_large)], True),
        (GROUP, member, [("t", 4, 4, "")], False),
        (simple, no_member, [("s", 0, 11, "simple")], True),
        (simple, no_member, [("s", 1, 12, "")], False),
    ]
    acked = {GROUP: {}, simple: {}}
    for group_id, (generation, member_id), partitions, succeeds in plan:
        request = OffsetCommitRequest(
            group_id,
            tuple(
                OffsetCommitPartition(t, p, o, committed_metadata=m) for t, p, o, m in partitions
            ),
            generation,
            member_id,
        )
        ref = d.next_ref("committer")
        outcomes = failing.step(d.state, Received(ref, request), d.now)
        assert len(outcomes) == 2
        (chosen,) = [o for o in outcomes if commit_succeeded(o, ref) == succeeds]
        d.state = chosen.state
        metadata = {(t, p): (o, m) for t, p, o, m in partitions}
        for result in response_to(chosen, ref).partitions:
            if result.error_code is ErrorCode.NONE:
                acked[group_id][(result.topic, result.partition)] = metadata[
                    (result.topic, result.partition)
                ]
    assert acked[GROUP] == {("t", 0): (9, "overwrite"), ("t", 1): (3, ""), ("t", 2): (1, None)}
    assert acked[simple] == {("s", 0): (11, "simple")}
    d.reload()
    for group_id, offsets in acked.items():
        assert d.fetch_all(group_id, metadata=True) == offsets
    body = d.ask("fetcher", OffsetFetchRequest(GROUP, (TopicPartition("t", 3),)))
    assert body.partitions[0].committed_offset == -1


def test_reloaded_empty_group_keeps_the_time_it_became_empty_for_retention():
    retention = 1_000_000
    d = Driver(offsets_retention_ms=retention)
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    d.ask("a", OffsetCommitRequest(GROUP, (OffsetCommitPartition("t", 0, 5),), 1, a), at=1_000)
    empty_at = 200_000
    d.ask("x", LeaveGroupRequest(GROUP, (MemberIdentity(a), MemberIdentity(b))), at=empty_at)
    d.reload(at=500_000)
    assert d.group.state is EMPTY
    d.step(OffsetRetentionCheck(), at=empty_at + retention - 1)
    assert d.fetch_all(metadata=True) == {("t", 0): (5, "")}
    d.step(OffsetRetentionCheck(), at=empty_at + retention)
    assert d.state.group(GROUP) is None
