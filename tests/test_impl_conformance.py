"""Differential conformance of the optimized coordinator against the spec (conformance/differential.py).

A Hypothesis state machine sends random request streams and timer events, with realistic,
stale and wrong member ids, generations and instance ids, to both the spec and the impl. Every
impl response must be one the spec allows, and the projected states must agree after every
step (see `Differential`). Several groups share and split offsets partitions; members are
static and dynamic; partitions fail over (Unload, StartLoading, FinishLoading); appends fail
at random where the profile allows.

The mutation tests at the end seed faults into the impl and check that the same machine, with
the same seeds, catches each one.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from groupspec.conformance.differential import ConformanceError, Differential
from groupspec.impl import coordinator as impl_coordinator
from groupspec.impl import events as impl_events
from groupspec.impl import join as impl_join
from groupspec.impl import leave as impl_leave
from groupspec.impl import offsets as impl_offsets
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.policy import RandomPolicy, SequentialIdPolicy
from groupspec.impl.runtime import Runtime
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.spec.events import FinishLoading, StartLoading, Unload
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.errors import ErrorCode as ImplErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
    TopicPartition,
)

# With 3 offsets partitions, g1 and g4 share partition 2 and g3 has partition 1.
GROUPS = ("g1", "g3", "g4")
INSTANCES = ("i1", "i2", "i3")
CLIENTS = ("c1", "c2", "c3")
TOPICS = ("t", "u", "v")
SUB_T = encode_subscription_v0(("t",))
SUB_TU = encode_subscription_v0(("t", "u"))
PROTOCOL_SETS = (
    (JoinGroupProtocol("range", SUB_T),),
    (JoinGroupProtocol("range", SUB_TU), JoinGroupProtocol("roundrobin", SUB_TU)),
    (JoinGroupProtocol("roundrobin", SUB_T), JoinGroupProtocol("range", SUB_T)),
    (JoinGroupProtocol("sticky", b"\x00\x09garbage"),),  # metadata that is no subscription
    (),
)
APPEND_ERRORS = (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_LEADER_OR_FOLLOWER)
PROFILES = {
    # Tight limits, short timeouts, failing appends: every corner the spec names.
    "tight": (
        CoordinatorConfig(
            group_min_session_timeout_ms=1_000,
            group_max_session_timeout_ms=30_000,
            group_initial_rebalance_delay_ms=3_000,
            group_max_size=3,
            new_member_join_timeout_ms=20_000,
            offsets_topic_num_partitions=3,
            offsets_retention_ms=60_000,
            offsets_retention_check_interval_ms=25_000,
            offset_metadata_max_bytes=8,
            broker_id=1,
            write_failures=APPEND_ERRORS,
        ),
        0.15,
    ),
    # No initial delay, roomy groups, appends that succeed.
    "roomy": (
        CoordinatorConfig(
            group_min_session_timeout_ms=1_000,
            group_max_session_timeout_ms=30_000,
            group_initial_rebalance_delay_ms=0,
            new_member_join_timeout_ms=20_000,
            offsets_topic_num_partitions=3,
            offsets_retention_ms=60_000,
            offsets_retention_check_interval_ms=25_000,
            offset_metadata_max_bytes=8,
        ),
        0.0,
    ),
}
SESSIONS = (5_000, 10_000, 30_000, 500, 40_000)  # the last two are out of bounds
REBALANCES = (4_000, 15_000, 0)
WHO = ("member", "member", "member", "pending", "stale", "other-group", "ghost")
GENERATIONS = ("current", "current", "current", "previous", "minus-one", "wrong")
INSTANCE_MODES = ("own", "own", "none", "other")

groups = st.sampled_from(GROUPS)


def as_spec_protocols(protocols):
    """A member's protocols as the spec's request type (the harness writes spec requests)."""
    return tuple(JoinGroupProtocol(p.name, p.metadata) for p in protocols)


picks = st.integers(min_value=0, max_value=1_000)


class ConformanceMachine(RuleBasedStateMachine):
    """Random traffic to spec and impl at once; `Differential` checks every step."""

    def __init__(self) -> None:
        super().__init__()
        self.diff: Differential
        self.seen: list[str] = []
        self.correlation = 0

    # -- set-up and helpers ---------------------------------------------------------------

    @initialize(
        profile=st.sampled_from(sorted(PROFILES)),
        seed=st.integers(min_value=0, max_value=2**16),
        unowned=st.sampled_from([(), (), (1,)]),
        random_choices=st.sampled_from([True, True, False]),
    )
    def start(self, profile, seed, unowned, random_choices):
        config, failure_rate = PROFILES[profile]
        if random_choices:
            policy = RandomPolicy(seed, failure_rate, APPEND_ERRORS if failure_rate else ())
        else:
            # Production's choices (first candidate, first tied name), reproducible ids.
            policy = SequentialIdPolicy(seed)
        self.diff = Differential(config, policy, unowned_partitions=frozenset(unowned))

    @property
    def impl(self) -> Coordinator:
        return self.diff.impl

    def ref(self, client: str) -> RequestRef:
        self.correlation += 1
        return RequestRef(client, self.correlation)

    def send(self, client, request):
        responses = self.diff.request(self.ref(client), request)
        self.remember(responses)
        return responses

    def remember(self, responses):
        for body in responses.values():
            member_id = getattr(body, "member_id", "")
            if member_id and member_id not in self.seen:
                self.seen.append(member_id)
        for group in self.impl.groups():
            for member_id in [*group.members, *group.pending_members]:
                if member_id not in self.seen:
                    self.seen.append(member_id)

    def group_id(self, pick):
        """Mostly a group that has members (where the interesting traffic goes), else any."""
        populated = sorted(g.group_id for g in self.impl.groups() if g.members)
        if populated and pick % 4 != 0:
            return populated[(pick // 4) % len(populated)]
        return GROUPS[pick % len(GROUPS)]

    def member(self, group_id, who, pick):
        """(member id, the member's instance id) of the kind `who` asks for."""
        group = self.impl.group(group_id)
        if who == "member" and group is not None and group.members:
            member = list(group.members.values())[pick % len(group.members)]
            return member.member_id, member.group_instance_id
        if who == "pending" and group is not None and group.pending_members:
            return list(group.pending_members)[pick % len(group.pending_members)], None
        if who == "other-group":
            others = [
                m for g in self.impl.groups() if g.group_id != group_id for m in g.members.values()
            ]
            if others:
                member = others[pick % len(others)]
                return member.member_id, member.group_instance_id
        if who in ("stale", "other-group") and self.seen:
            return self.seen[pick % len(self.seen)], None
        return ("c1-00000000-0000-4000-8000-000000000000", "ghost-7")[pick % 2], None

    @staticmethod
    def instance(mode, own, pick):
        if mode == "own":
            return own
        if mode == "none":
            return None
        return INSTANCES[pick % len(INSTANCES)]

    def generation(self, group_id, mode):
        group = self.impl.group(group_id)
        current = group.generation_id if group is not None else 0
        return {"current": current, "previous": current - 1, "minus-one": -1, "wrong": 17}[mode]

    # -- requests -------------------------------------------------------------------------

    @rule(
        group_id=groups,
        client=st.sampled_from(CLIENTS),
        instance=st.sampled_from((None, *INSTANCES)),
        version=st.sampled_from((9, 9, 5, 4, 3, 0)),
        protocols=st.sampled_from(PROTOCOL_SETS[:4]),
        protocol_type=st.sampled_from(("consumer", "consumer", "consumer", "connect", "")),
        session=st.sampled_from(SESSIONS),
        rebalance=st.sampled_from(REBALANCES),
    )
    def join_new(
        self, group_id, client, instance, version, protocols, protocol_type, session, rebalance
    ):
        if version < 5:
            instance = None
        self.send(
            client,
            JoinGroupRequest(
                group_id,
                "",
                protocol_type,
                protocols,
                session,
                -1 if version == 0 else rebalance,
                group_instance_id=instance,
                client_id=client,
                api_version=version,
            ),
        )

    @rule(
        group_pick=picks,
        clients=st.lists(st.sampled_from(CLIENTS), min_size=1, max_size=3),
        protocols=st.sampled_from(PROTOCOL_SETS[:3]),
        session=st.sampled_from(SESSIONS[:3]),
        rebalance=st.sampled_from(REBALANCES),
    )
    def join_with_member_id_required(self, group_pick, clients, protocols, session, rebalance):
        """New dynamic members do the v4+ dance: fetch an id, then join with it."""
        group_id = self.group_id(group_pick)
        for client in clients:
            request = JoinGroupRequest(
                group_id, "", "consumer", protocols, session, rebalance, client_id=client
            )
            responses = self.send(client, request)
            for body in responses.values():
                if body.error_code == ImplErrorCode.MEMBER_ID_REQUIRED:
                    self.send(
                        client,
                        JoinGroupRequest(
                            group_id,
                            body.member_id,
                            "consumer",
                            protocols,
                            session,
                            rebalance,
                            client_id=client,
                        ),
                    )

    @rule(
        group_pick=picks,
        who=st.sampled_from(WHO),
        pick=picks,
        instance_mode=st.sampled_from(INSTANCE_MODES),
        same_protocols=st.booleans(),
        protocols=st.sampled_from(PROTOCOL_SETS),
        session=st.sampled_from(SESSIONS),
        rebalance=st.sampled_from(REBALANCES),
        version=st.sampled_from((9, 7, 5, 2)),
    )
    def rejoin(
        self,
        group_pick,
        who,
        pick,
        instance_mode,
        same_protocols,
        protocols,
        session,
        rebalance,
        version,
    ):
        group_id = self.group_id(group_pick)
        member_id, own = self.member(group_id, who, pick)
        instance = self.instance(instance_mode, own, pick) if version >= 5 else None
        group = self.impl.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if same_protocols and member is not None:
            protocols = as_spec_protocols(member.protocols)
        self.send(
            "rejoin",
            JoinGroupRequest(
                group_id,
                member_id,
                "consumer",
                protocols,
                session,
                rebalance,
                group_instance_id=instance,
                client_id="c1",
                api_version=version,
            ),
        )

    @rule(
        group_pick=picks,
        who=st.sampled_from(WHO),
        pick=picks,
        generation=st.sampled_from(GENERATIONS),
        instance_mode=st.sampled_from(INSTANCE_MODES),
        with_assignments=st.booleans(),
        protocol_name=st.sampled_from((None, None, "range", "roundrobin")),
    )
    def sync(
        self, group_pick, who, pick, generation, instance_mode, with_assignments, protocol_name
    ):
        group_id = self.group_id(group_pick)
        member_id, own = self.member(group_id, who, pick)
        group = self.impl.group(group_id)
        assignments = ()
        if with_assignments and group is not None:
            targets = list(group.members)[: 1 + pick % 3]
            assignments = tuple(
                SyncGroupAssignment(m, f"part-{i}-{pick % 5}".encode())
                for i, m in enumerate(targets)
            )
        self.send(
            "sync",
            SyncGroupRequest(
                group_id,
                self.generation(group_id, generation),
                member_id,
                group_instance_id=self.instance(instance_mode, own, pick),
                protocol_type="consumer" if pick % 4 == 0 else None,
                protocol_name=protocol_name,
                assignments=assignments,
            ),
        )

    @rule(
        group_pick=picks,
        who=st.sampled_from(WHO),
        pick=picks,
        generation=st.sampled_from(GENERATIONS),
        instance_mode=st.sampled_from(INSTANCE_MODES),
    )
    def heartbeat(self, group_pick, who, pick, generation, instance_mode):
        group_id = self.group_id(group_pick)
        member_id, own = self.member(group_id, who, pick)
        self.send(
            "heartbeat",
            HeartbeatRequest(
                group_id,
                self.generation(group_id, generation),
                member_id,
                group_instance_id=self.instance(instance_mode, own, pick),
            ),
        )

    @rule(
        group_pick=picks,
        entries=st.lists(
            st.tuples(
                st.sampled_from((*WHO, "by-instance")), picks, st.sampled_from(INSTANCE_MODES)
            ),
            min_size=1,
            max_size=3,
        ),
        legacy=st.booleans(),
    )
    def leave(self, group_pick, entries, legacy):
        group_id = self.group_id(group_pick)
        identities = []
        for who, pick, instance_mode in entries:
            if who == "by-instance":
                identities.append(MemberIdentity("", INSTANCES[pick % len(INSTANCES)]))
                continue
            member_id, own = self.member(group_id, who, pick)
            identities.append(MemberIdentity(member_id, self.instance(instance_mode, own, pick)))
        if legacy:  # v0–v2: one member id, no instance id
            request = LeaveGroupRequest(
                group_id, (MemberIdentity(identities[0].member_id),), api_version=2
            )
        else:
            request = LeaveGroupRequest(group_id, tuple(identities))
        self.send("leave", request)

    @rule(
        group_pick=picks,
        who=st.sampled_from((*WHO, "admin")),
        pick=picks,
        generation=st.sampled_from(GENERATIONS),
        instance_mode=st.sampled_from(INSTANCE_MODES),
        offsets=st.lists(
            st.tuples(
                st.sampled_from(TOPICS),
                st.integers(0, 1),
                st.integers(0, 100),
                st.sampled_from(("", "m", None, "too-long-metadata")),
            ),
            max_size=3,
            unique_by=lambda o: (o[0], o[1]),
        ),
        version=st.sampled_from((9, 8, 7, 3)),
        retention=st.sampled_from((-1, -1, 5_000)),
    )
    def commit(self, group_pick, who, pick, generation, instance_mode, offsets, version, retention):
        group_id = self.group_id(group_pick)
        if who == "admin":  # manual assignment / admin tools: no member, no generation
            member_id, instance, generation_id = "", None, -1
        else:
            member_id, own = self.member(group_id, who, pick)
            instance = self.instance(instance_mode, own, pick) if version >= 7 else None
            generation_id = self.generation(group_id, generation)
        self.send(
            "commit",
            OffsetCommitRequest(
                group_id,
                tuple(
                    OffsetCommitPartition(t, p, o, committed_metadata=m) for t, p, o, m in offsets
                ),
                generation_id=generation_id,
                member_id=member_id,
                group_instance_id=instance,
                retention_time_ms=retention if 2 <= version <= 4 else -1,
                api_version=version,
            ),
        )

    @rule(
        group_pick=picks,
        everything=st.booleans(),
        topics=st.lists(st.sampled_from(TOPICS), max_size=3),
    )
    def fetch(self, group_pick, everything, topics):
        group_id = self.group_id(group_pick)
        partitions = None if everything else tuple(TopicPartition(t, 0) for t in topics)
        self.send("fetch", OffsetFetchRequest(group_id, partitions))

    @rule(
        kind=st.sampled_from(("describe", "list", "delete", "find")),
        chosen_picks=st.lists(picks, min_size=1, max_size=3),
        state_filter=st.sampled_from(((), ("stable",), ("Empty", "preparingrebalance"))),
    )
    def admin(self, kind, chosen_picks, state_filter):
        chosen = [self.group_id(pick) if pick % 9 else "g9" for pick in chosen_picks]
        if kind == "describe":
            request = DescribeGroupsRequest(tuple(chosen))
        elif kind == "list":
            request = ListGroupsRequest(states_filter=state_filter)
        elif kind == "delete":
            request = DeleteGroupsRequest(tuple(chosen))
        else:
            request = FindCoordinatorRequest(chosen[0])
        self.send("admin", request)

    @rule(group_pick=picks, commit=st.booleans())
    def members_keep_up(self, group_pick, commit):
        """Every member of a group heartbeats (and maybe commits) at its group's generation."""
        group_id = self.group_id(group_pick)
        group = self.impl.group(group_id)
        if group is None:
            return
        for member_id in list(group.members):
            group = self.impl.group(group_id)
            if group is None or member_id not in group.members:
                continue
            instance = group.members[member_id].group_instance_id
            self.send(
                "member",
                HeartbeatRequest(
                    group_id, group.generation_id, member_id, group_instance_id=instance
                ),
            )
            if commit:
                self.send(
                    "member",
                    OffsetCommitRequest(
                        group_id,
                        (OffsetCommitPartition("t", group_pick % 2, group_pick),),
                        generation_id=group.generation_id,
                        member_id=member_id,
                        group_instance_id=instance,
                    ),
                )

    @rule(
        group_pick=picks,
        instances=st.lists(st.sampled_from(INSTANCES), min_size=1, max_size=3, unique=True),
        protocols=st.sampled_from(PROTOCOL_SETS[:3]),
        session=st.sampled_from(SESSIONS[:3]),
        rebalance=st.sampled_from(REBALANCES),
    )
    def static_members_join(self, group_pick, instances, protocols, session, rebalance):
        """Static members (KIP-345) join: new ones are added at once, known ones replaced."""
        group_id = self.group_id(group_pick)
        for instance in instances:
            self.send(
                instance,
                JoinGroupRequest(
                    group_id,
                    "",
                    "consumer",
                    protocols,
                    session,
                    rebalance,
                    group_instance_id=instance,
                    client_id=f"client-{instance}",
                ),
            )

    @rule(group_pick=picks, pick=picks, protocols=st.sampled_from((None, *PROTOCOL_SETS[:3])))
    def static_member_restarts(self, group_pick, pick, protocols):
        """A static member's client restarts: it joins with member id "" and its instance id."""
        group = self.impl.group(self.group_id(group_pick))
        if group is None or not group.static_members:
            return
        instance = sorted(group.static_members)[pick % len(group.static_members)]
        member = group.members[group.static_members[instance]]
        self.send(
            instance,
            JoinGroupRequest(
                group.group_id,
                "",
                "consumer",
                as_spec_protocols(member.protocols) if protocols is None else protocols,
                member.session_timeout_ms,
                member.rebalance_timeout_ms,
                group_instance_id=instance,
                client_id=member.client_id,
                api_version=(9, 9, 5)[pick % 3],
            ),
        )

    @rule(kind=st.sampled_from(("join", "sync", "heartbeat", "leave", "commit", "fetch")))
    def empty_group_id(self, kind):
        """Group requests for the group id "" (Join/Sync/Heartbeat/Leave refuse it)."""
        request = {
            "join": JoinGroupRequest("", "", "consumer", PROTOCOL_SETS[0], 10_000, 10_000),
            "sync": SyncGroupRequest("", 0, "m"),
            "heartbeat": HeartbeatRequest("", 0, "m"),
            "leave": LeaveGroupRequest("", (MemberIdentity("m"),)),
            "commit": OffsetCommitRequest("", (OffsetCommitPartition("t", 0, 1),)),
            "fetch": OffsetFetchRequest("", None),
        }[kind]
        self.send("blank", request)

    # -- time, timers and failover --------------------------------------------------------

    @rule(pick=picks)
    def fire_armed_timer(self, pick):
        """Any armed timer may fire at any moment (the spec's abstract time)."""
        armed = sorted(self.impl.armed_timers(), key=lambda timer: (timer[0], repr(timer[1])))
        self.remember(self.diff.fire(armed[pick % len(armed)][1]))

    @rule(delta=st.sampled_from((1, 500, 1_000, 3_000, 3_000, 6_000, 20_000, 30_000, 70_000)))
    def time_passes(self, delta):
        """The clock moves and the impl fires what is due on its own (its timer heap)."""
        self.diff.set_time(self.diff.now + delta)
        self.diff.advance()
        self.remember({})

    @rule(group_pick=picks, rounds=st.integers(1, 10), silent=picks)
    def heartbeats_while_time_passes(self, group_pick, rounds, silent):
        """Members heartbeat every 3 s; halfway through one falls silent. Sessions are extended
        many times over (lazy re-queueing in the timer heap), then the silent member's session
        expires on the clock, through the heap."""
        group_id = self.group_id(group_pick)
        for round_ in range(rounds):
            self.diff.set_time(self.diff.now + 3_000)
            self.diff.advance()
            group = self.impl.group(group_id)
            if group is None:
                continue
            members = list(group.members.values())
            for index, member in enumerate(members):
                if round_ >= rounds // 2 and index == silent % len(members):
                    continue
                if member.member_id not in group.members:
                    continue
                self.send(
                    "member",
                    HeartbeatRequest(
                        group_id,
                        group.generation_id,
                        member.member_id,
                        group_instance_id=member.group_instance_id,
                    ),
                )
            self.remember({})

    @rule(
        group_id=groups,
        until=st.sampled_from(("unloaded", "loading", "loaded", "loaded", "loaded")),
    )
    def failover(self, group_id, until):
        """The group's offsets partition moves away and (usually) comes back, step by step."""
        partition = self.impl.partition_for(group_id)
        for _ in range(3):
            if partition in self.impl.unowned_partitions:
                if until == "unloaded":
                    return
                event = StartLoading(partition)
            elif partition in self.impl.loading_partitions:
                if until == "loading":
                    return
                event = FinishLoading(partition)
            else:
                if until == "loaded" and _ > 0:
                    return
                event = Unload(partition)
            self.remember(self.diff.partition_event(event))

    @precondition(lambda self: any(True for _ in self.impl.groups()))
    @rule(pick=picks)
    def settle(self, pick):
        """Drive one group towards Stable the way well-behaved clients would."""
        group_list = list(self.impl.groups())
        group = group_list[pick % len(group_list)]
        gid = group.group_id
        if group.state is STABLE or group.state is COMPLETING_REBALANCE:
            # Members rejoin with what they have (all, or all but one): the leader's join, or
            # any join in CompletingRebalance with other protocols, starts a rebalance.
            skip = pick % (len(group.members) + 2)
            for index, member in enumerate(list(group.members.values())):
                if index == skip:
                    continue
                if member.member_id in group.members and member.awaiting_join is None:
                    self.send(
                        "settle",
                        JoinGroupRequest(
                            gid,
                            member.member_id,
                            member.protocol_type,
                            as_spec_protocols(member.protocols),
                            member.session_timeout_ms,
                            member.rebalance_timeout_ms,
                            group_instance_id=member.group_instance_id,
                            client_id=member.client_id,
                        ),
                    )
        group = self.impl.group(gid)
        if (
            group is not None
            and group.state is PREPARING_REBALANCE
            and group.join_timer is not None
        ):
            self.remember(self.diff.fire(impl_events.JoinTimerExpired(gid)))
        group = self.impl.group(gid)
        if group is None or group.state is not COMPLETING_REBALANCE:
            return
        leader = group.leader_id
        followers = [m for m in group.members if m != leader]
        order = [leader, *followers] if pick % 3 else [*followers, leader]
        if pick % 7 == 0:
            # A client whose assignor disagrees with the group's protocol.
            self.send(
                "settle",
                SyncGroupRequest(gid, group.generation_id, order[0], protocol_name="sticky"),
            )
        if pick % 5 == 0 and followers:
            # A follower rejoins with changed protocols before syncing.
            member = group.members[followers[0]]
            self.send(
                "settle",
                JoinGroupRequest(
                    gid,
                    member.member_id,
                    member.protocol_type,
                    tuple(reversed(as_spec_protocols(member.protocols))) or PROTOCOL_SETS[0],
                    member.session_timeout_ms,
                    member.rebalance_timeout_ms,
                    group_instance_id=member.group_instance_id,
                    client_id=member.client_id,
                ),
            )
            group = self.impl.group(gid)
            if group is None or group.state is not COMPLETING_REBALANCE:
                return
        for member_id in order:
            group = self.impl.group(gid)
            if group is None or member_id not in group.members:
                continue
            member = group.members[member_id]
            assignments = ()
            if member_id == leader:
                assignments = tuple(
                    SyncGroupAssignment(m, f"assigned-{i}".encode())
                    for i, m in enumerate(group.members)
                )
            self.send(
                "settle",
                SyncGroupRequest(
                    gid,
                    group.generation_id,
                    member_id,
                    group_instance_id=member.group_instance_id,
                    assignments=assignments,
                ),
            )
        self.send("settle", DescribeGroupsRequest((gid,)))


SETTINGS = settings(
    max_examples=150,
    stateful_step_count=80,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
ConformanceMachine.TestCase.settings = SETTINGS
TestConformance = ConformanceMachine.TestCase


# -- mutations: the harness has teeth ---------------------------------------------------------

MUTATION_SETTINGS = settings(
    SETTINGS,
    phases=[Phase.explicit, Phase.generate],
    report_multiple_bugs=False,
)


def _skip_generation_check(original):
    def validate(group, request):
        error = original(group, request)
        return None if error is ImplErrorCode.ILLEGAL_GENERATION else error

    return validate


def _keep_old_static_id(original):
    def swap(group, old, new_member_id):
        successor = original(group, old, new_member_id)
        group.members[old.member_id] = old  # the fenced incarnation stays a member
        return successor

    return swap


def _no_rebalance(rt, group):
    return None


def _never_arm_sync_timer(self, group, delay_ms):
    return None


def _forget_moved_heartbeat(rt, group, member, deadline_ms):
    return None  # the entry left the heap and nothing replaces it: the session never expires


MUTATIONS = {
    "commit skips the generation check": (
        impl_offsets,
        "validate_offset_commit",
        _skip_generation_check(impl_offsets.validate_offset_commit),
    ),
    "static replacement keeps the old member id": (
        impl_join,
        "swap_static_member",
        _keep_old_static_id(impl_join.swap_static_member),
    ),
    "the sync timer is never armed": (Runtime, "arm_sync_timer", _never_arm_sync_timer),
    "leaving does not rebalance": (impl_leave, "prepare_rebalance", _no_rebalance),
    "the timer heap drops a heartbeat-extended session": (
        impl_coordinator,
        "requeue_heartbeat",
        _forget_moved_heartbeat,
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_seeded_fault_is_caught(mutation, monkeypatch):
    owner, attribute, replacement = MUTATIONS[mutation]
    monkeypatch.setattr(owner, attribute, replacement)
    with pytest.raises(ConformanceError):
        run_state_machine_as_test(ConformanceMachine, settings=MUTATION_SETTINGS)
