"""Rare paths of the coordinator, driven on purpose through the differential harness.

The random differential test (test_impl_conformance.py) reaches most of the spec's rules; these
scenarios make sure the rare ones (failed appends at precise moments, re-elections, vote ties,
retention, parked requests during failover) are exercised on every run, again with the spec
checking every step. A scripted policy decides the impl's choices, so each scenario also shows
that the spec accepts choices other than its own first option.
"""

from __future__ import annotations

from collections import deque

from groupspec.conformance.differential import Differential
from groupspec.impl import events as impl_events
from groupspec.impl.policy import SequentialIdPolicy
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.spec.events import FinishLoading, StartLoading, Unload
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.errors import ErrorCode as ImplErrorCode
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
)

G = "g1"
RANGE = (JoinGroupProtocol("range", encode_subscription_v0(("t",))),)
RANGE_RR = (
    JoinGroupProtocol("range", encode_subscription_v0(("t",))),
    JoinGroupProtocol("roundrobin", encode_subscription_v0(("t",))),
)
RR_RANGE = tuple(reversed(RANGE_RR))
FAILURES = (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_LEADER_OR_FOLLOWER)


class ScriptedPolicy(SequentialIdPolicy):
    """Sequential ids; appends fail when told; leaders and ties take the *last* option."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: deque[ImplErrorCode] = deque()

    def leader_after_removal(self, group_id, candidates):
        return candidates[-1]

    def leader_at_join_completion(self, group_id, candidates):
        return candidates[-1]

    def protocol_vote_tie(self, group_id, tied):
        return tied[-1]

    def append_error(self, group_id, records):
        return self.failures.popleft() if self.failures else None


class Scenario:
    """A differential run with client-shaped helpers; every step is checked against the spec."""

    def __init__(self, **config):
        settings = dict(
            group_min_session_timeout_ms=1_000,
            group_max_session_timeout_ms=60_000,
            group_initial_rebalance_delay_ms=3_000,
            offsets_topic_num_partitions=3,
            offsets_retention_ms=60_000,
            offsets_retention_check_interval_ms=10_000,
            write_failures=FAILURES,
        )
        settings.update(config)
        self.policy = ScriptedPolicy()
        self.diff = Differential(CoordinatorConfig(**settings), self.policy)
        self.correlation = 0

    @property
    def group(self):
        return self.diff.impl.group(G)

    def ref(self, client):
        self.correlation += 1
        return RequestRef(client, self.correlation)

    def send(self, client, request):
        ref = self.ref(client)
        return ref, self.diff.request(ref, request)

    def ask(self, client, request):
        ref, responses = self.send(client, request)
        return responses[ref]

    def fail_next_append(self, error=ImplErrorCode.NOT_ENOUGH_REPLICAS):
        self.policy.failures.append(error)

    def join(
        self,
        client,
        member_id="",
        *,
        instance=None,
        protocols=RANGE,
        session=10_000,
        rebalance=20_000,
    ):
        request = JoinGroupRequest(
            G,
            member_id,
            "consumer",
            protocols,
            session,
            rebalance,
            group_instance_id=instance,
            client_id=client,
        )
        return self.send(client, request)

    def join_dynamic(self, client, protocols=RANGE):
        body = self.ask(
            client, JoinGroupRequest(G, "", "consumer", protocols, 10_000, 20_000, client_id=client)
        )
        assert body.error_code == ImplErrorCode.MEMBER_ID_REQUIRED
        self.join(client, body.member_id, protocols=protocols)
        return body.member_id

    def join_static(self, instance, protocols=RANGE):
        before = set(self.group.members) if self.group else set()
        self.join(instance, instance=instance, protocols=protocols)
        (new,) = set(self.group.members) - before - {m for m in before if m in self.group.members}
        return new

    def fire_join_timer(self):
        """Fire the join timer until the join phase is over (the initial delay may extend)."""
        for _ in range(5):
            self.diff.fire(impl_events.JoinTimerExpired(G))
            if self.group is None or self.group.state is not PREPARING_REBALANCE:
                return
        raise AssertionError("the join phase never completed")

    def sync(self, member_id, assignments=(), *, instance=None, generation=None):
        generation = self.group.generation_id if generation is None else generation
        given = tuple(SyncGroupAssignment(m, a) for m, a in assignments)
        return self.send(
            member_id,
            SyncGroupRequest(
                G, generation, member_id, group_instance_id=instance, assignments=given
            ),
        )

    def form_stable(self, *joins):
        """Members join, the initial delay fires, the leader assigns, followers sync."""
        for join in joins:
            join()
        self.fire_join_timer()
        assert self.group.state is COMPLETING_REBALANCE
        leader = self.group.leader_id
        members = list(self.group.members)
        self.sync(
            leader,
            [(m, f"a-{m}".encode()) for m in members],
            instance=self.group.members[leader].group_instance_id,
        )
        for member_id in members:
            if member_id != leader:
                self.sync(member_id, instance=self.group.members[member_id].group_instance_id)
        assert self.group.state is STABLE
        return members


def test_static_replacement_whose_record_fails_is_reverted():
    s = Scenario()
    s.form_stable(lambda: s.join_static("i1"), lambda: s.join_static("i2"))
    old = s.group.static_members["i2"]
    s.fail_next_append()
    ref, responses = s.join("i2", instance="i2")
    assert responses[ref].error_code == ImplErrorCode.COORDINATOR_NOT_AVAILABLE
    assert responses[ref].member_id == ""
    assert s.group.static_members["i2"] == old and s.group.state is STABLE


def test_static_replacement_in_stable_keeps_the_generation_and_fences_the_old_id():
    s = Scenario()
    s.form_stable(lambda: s.join_static("i1"), lambda: s.join_static("i2"))
    generation = s.group.generation_id
    old = s.group.static_members["i1"]
    ref, responses = s.join("i1", instance="i1")
    assert responses[ref].error_code == ImplErrorCode.NONE
    assert s.group.generation_id == generation
    fenced = s.ask("old", HeartbeatRequest(G, generation, old, group_instance_id="i1"))
    assert fenced.error_code == ImplErrorCode.FENCED_INSTANCE_ID


def test_leader_reelected_when_a_static_leader_does_not_rejoin():
    s = Scenario()
    s.form_stable(
        lambda: s.join_static("i1"), lambda: s.join_static("i2"), lambda: s.join_static("i3")
    )
    leader = s.group.leader_id
    followers = [m for m in s.group.members if m != leader]
    for member_id in followers:  # followers rejoin with changed protocols: a rebalance starts
        member = s.group.members[member_id]
        s.join(member.client_id, member_id, instance=member.group_instance_id, protocols=RANGE_RR)
    assert s.group.state is PREPARING_REBALANCE
    s.fire_join_timer()
    assert s.group.state is COMPLETING_REBALANCE
    assert s.group.leader_id == followers[-1]  # the scripted policy's pick, accepted by the spec
    assert leader in s.group.members  # static members that did not rejoin are kept


def test_protocol_vote_tie_is_the_policys_choice():
    s = Scenario()
    s.join_dynamic("c1", RANGE_RR)
    s.join_dynamic("c2", RR_RANGE)
    s.fire_join_timer()
    assert s.group.protocol_name == "roundrobin"  # tied 1:1; the policy takes the last


def test_failed_assignment_write_fails_parked_syncs_and_rebalances():
    s = Scenario()
    a = s.join_dynamic("c1")
    b = s.join_dynamic("c2")
    s.fire_join_timer()
    leader = s.group.leader_id
    follower = b if leader == a else a
    follower_ref, _ = s.sync(follower)
    s.fail_next_append(ImplErrorCode.NOT_LEADER_OR_FOLLOWER)
    leader_ref, responses = s.sync(leader, [(a, b"x"), (b, b"y")])
    assert responses[leader_ref].error_code == ImplErrorCode.NOT_COORDINATOR
    assert responses[follower_ref].error_code == ImplErrorCode.NOT_COORDINATOR
    assert s.group.state is PREPARING_REBALANCE


def test_new_group_whose_record_fails_never_exists():
    s = Scenario()
    s.fail_next_append()
    ref, responses = s.join("c1")
    assert responses[ref].error_code == ImplErrorCode.COORDINATOR_NOT_AVAILABLE
    assert s.group is None


def test_follower_that_never_syncs_is_evicted_after_stable():
    s = Scenario()
    a = s.join_dynamic("c1")
    b = s.join_dynamic("c2")
    s.fire_join_timer()
    leader = s.group.leader_id
    s.sync(leader, [(a, b"x"), (b, b"y")])
    assert s.group.state is STABLE
    s.diff.fire(impl_events.SyncTimerExpired(G))
    assert s.group.state is PREPARING_REBALANCE
    assert set(s.group.members) == {leader}


def test_parked_requests_are_answered_not_coordinator_on_unload():
    s = Scenario()
    a = s.join_dynamic("c1")
    b = s.join_dynamic("c2")
    s.fire_join_timer()
    follower = b if s.group.leader_id == a else a
    ref, _ = s.sync(follower)
    partition = s.diff.impl.partition_for(G)
    responses = s.diff.partition_event(Unload(partition))
    assert responses[ref].error_code == ImplErrorCode.NOT_COORDINATOR
    s.diff.partition_event(StartLoading(partition))
    s.diff.partition_event(FinishLoading(partition))
    assert s.group.state is EMPTY  # the rebalance in flight is lost with the unload


def test_stable_group_survives_failover_with_its_assignment():
    s = Scenario()
    members = s.form_stable(lambda: s.join_dynamic("c1"), lambda: s.join_dynamic("c2"))
    s.ask(
        "c1",
        OffsetCommitRequest(
            G, (OffsetCommitPartition("t", 0, 42),), s.group.generation_id, members[0]
        ),
    )
    partition = s.diff.impl.partition_for(G)
    for event in (Unload(partition), StartLoading(partition), FinishLoading(partition)):
        s.diff.partition_event(event)
    assert s.group.state is STABLE and set(s.group.members) == set(members)
    body = s.ask("c1", OffsetFetchRequest(G, None))
    assert [(p.topic, p.partition, p.committed_offset) for p in body.partitions] == [("t", 0, 42)]


def test_heartbeat_expiry_spares_a_member_parked_in_join():
    s = Scenario()
    members = s.form_stable(lambda: s.join_dynamic("c1"), lambda: s.join_dynamic("c2"))
    leader = s.group.leader_id
    s.join("c1", leader)  # the leader rejoins: parked in JoinGroup
    s.diff.fire(impl_events.HeartbeatExpired(G, leader))
    assert leader in s.group.members and s.group.members[leader].heartbeat_deadline_ms is None
    follower = next(m for m in members if m != leader)
    s.diff.fire(impl_events.HeartbeatExpired(G, follower))  # not parked: evicted
    assert follower not in s.group.members


def test_follower_changing_protocols_in_stable_rebalances():
    s = Scenario()
    s.form_stable(lambda: s.join_dynamic("c1", RANGE_RR), lambda: s.join_dynamic("c2", RANGE_RR))
    follower = next(m for m in s.group.members if m != s.group.leader_id)
    s.join("c2", follower, protocols=RR_RANGE)
    assert s.group.state is PREPARING_REBALANCE


def test_pending_member_with_an_instance_id_and_leaving_pending_members():
    s = Scenario()
    body = s.ask("c1", JoinGroupRequest(G, "", "consumer", RANGE, 10_000, 20_000, client_id="c1"))
    pending = body.member_id
    ref, responses = s.join("c1", pending, instance="i9")
    assert responses[ref].error_code == ImplErrorCode.UNKNOWN_SERVER_ERROR
    body = s.ask("c1", LeaveGroupRequest(G, (MemberIdentity(pending),)))
    assert body.members[0].error_code == ImplErrorCode.NONE
    assert pending not in s.group.pending_members


def test_delete_whose_tombstones_fail_keeps_the_group():
    s = Scenario()
    s.ask("admin", OffsetCommitRequest(G, (OffsetCommitPartition("t", 0, 1),)))
    s.fail_next_append(ImplErrorCode.NOT_LEADER_OR_FOLLOWER)
    body = s.ask("admin", DeleteGroupsRequest((G,)))
    assert body.results[0].error_code == ImplErrorCode.NOT_COORDINATOR
    body = s.ask("admin", DeleteGroupsRequest((G,)))
    assert body.results[0].error_code == ImplErrorCode.NONE and s.group is None


def test_retention_expires_by_the_rules_of_each_group_kind():
    s = Scenario()
    # A Stable consumer group subscribed to "t": its "u" offset may expire, "t" may not.
    members = s.form_stable(lambda: s.join_dynamic("c1"))
    generation = s.group.generation_id
    partitions = (OffsetCommitPartition("t", 0, 5), OffsetCommitPartition("u", 0, 6))
    s.ask("c1", OffsetCommitRequest(G, partitions, generation, members[0]))
    # A simple group, one offset with an explicit expiry (OffsetCommit v2–v4).
    s.ask(
        "admin",
        OffsetCommitRequest(
            "g3", (OffsetCommitPartition("t", 0, 1),), retention_time_ms=5_000, api_version=3
        ),
    )
    for now in (10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000):
        s.diff.set_time(now)
        s.ask("c1", HeartbeatRequest(G, generation, members[0]))
        s.diff.advance()
    assert set(s.group.offsets) == {("t", 0)}
    assert s.diff.impl.group("g3") is None  # its only offset expired: the simple group is gone
    s.fail_next_append()
    s.ask("c1", LeaveGroupRequest(G, (MemberIdentity(members[0]),)))
    s.diff.set_time(140_000)
    s.diff.advance()  # the Empty group's offsets expire a retention after it became Empty
    assert s.group is None


def test_static_members_that_did_not_rejoin_can_overfill_a_group_and_reload_rebalances():
    """Kafka's admission in PreparingRebalance counts only members that rejoined, and static
    members that did not rejoin survive join completion, so a group can exceed group.max.size;
    reloading such a group starts a rebalance."""
    s = Scenario(group_max_size=3)
    s.form_stable(
        lambda: s.join_static("i1"), lambda: s.join_static("i2"), lambda: s.join_static("i3")
    )
    leader = s.group.members[s.group.leader_id]
    s.join(leader.client_id, leader.member_id, instance=leader.group_instance_id)
    assert s.group.state is PREPARING_REBALANCE
    s.join_dynamic("c4")
    s.join_dynamic("c5")
    s.fire_join_timer()
    assert s.group.state is COMPLETING_REBALANCE and len(s.group.members) == 5
    s.sync(
        s.group.leader_id, [(m, b"a") for m in s.group.members], instance=leader.group_instance_id
    )
    assert s.group.state is STABLE
    partition = s.diff.impl.partition_for(G)
    for event in (Unload(partition), StartLoading(partition), FinishLoading(partition)):
        s.diff.partition_event(event)
    assert s.group.state is PREPARING_REBALANCE


def test_static_replacement_that_would_change_the_protocol_rebalances():
    s = Scenario()
    s.form_stable(lambda: s.join_static("i1", RANGE_RR))
    assert s.group.protocol_name == "range"
    generation = s.group.generation_id
    ref, responses = s.join("i1", instance="i1", protocols=RR_RANGE)
    # A rebalance, not a silent hand-over: its only member has rejoined, so it completes at once.
    assert responses[ref].generation_id == generation + 1
    assert (s.group.state, s.group.protocol_name) == (COMPLETING_REBALANCE, "roundrobin")
