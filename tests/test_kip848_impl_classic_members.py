"""Classic members inside a consumer group: the optimized coordinator (impl/kip848/
classic_members.py) against the mixed specification (spec/kip848/mixed.py) with the migration
policy `groupspec serve` follows (disabled: no online conversion of a non-empty group), step by
step. Hypothesis sends both the same consumer-protocol joins, heartbeats and leaves (of dynamic
members and of a static one, instance i1, which may also leave with -2) and classic JoinGroups
(reporting any owned partitions; dynamic, or static with instance i1 or i2: without member id,
with the holder's, or with another id), SyncGroups, Heartbeats (at the member's generation or
another) and LeaveGroups, timer firings and clock advances; after every step the responses and
the consumer group's full projection (conformance/kip848_differential.py) plus the classic
members' join and sync timeouts must equal those of one outcome the specification allows, and
after every static classic join and at the end of each run, the groups the impl's records
rebuild (a restart) must equal those the specification's log replays to. Classic requests go only to a non-empty consumer group: what an Empty one becomes is
the server's routing (impl/server/consumer_groups.py)."""

from __future__ import annotations

from dataclasses import replace
from itertools import count
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from kip848_helpers import owned
from mixed_helpers import classic_beat, classic_leave, classic_sync, metadata

from groupspec.conformance.kip848_differential import (
    impl_config,
    impl_full_projection,
    impl_projection,
    spec_full_projection,
    spec_member_ids,
    spec_projection,
)
from groupspec.impl.clock import ManualClock
from groupspec.impl.kip848 import ConsumerGroupCoordinator
from groupspec.impl.kip848 import RebalanceTimeoutExpired as ImplRebalanceTimeout
from groupspec.impl.kip848 import SessionTimeoutExpired as ImplSessionTimeout
from groupspec.impl.kip848.events import ClassicJoinTimeoutExpired as ImplJoinTimeout
from groupspec.impl.kip848.events import ClassicSyncTimeoutExpired as ImplSyncTimeout
from groupspec.impl.kip848.records import ConsumerGroupRecord
from groupspec.impl.kip848.runtime import CLASSIC_JOIN
from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupsState,
    RebalanceTimeoutExpired,
    RequestArrived,
    SessionTimeoutExpired,
)
from groupspec.spec.kip848.classic_members import (
    ClassicJoinTimeoutExpired,
    ClassicSyncTimeoutExpired,
)
from groupspec.spec.kip848.mixed import MixedCoordinatorSpec, MixedOutcome
from groupspec.spec.kip848.records import (
    CurrentAssignmentKey,
    GroupMetadataKey,
    MemberMetadataKey,
    TargetAssignmentMemberKey,
    TargetAssignmentMetadataKey,
    records_between,
)
from groupspec.spec.kip848.replay import replay
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    Received,
    RequestRef,
)

GROUP = "g"
REF = RequestRef("client", 0)
CONSUMERS = ("a", "b", "s")
# The consumer-protocol member "s" is static; classic members may be static with i1 or i2.
INSTANCES = {"s": "i1"}
PARTITIONS = ("t0-0", "t0-1", "t1-0")
SEEN: dict[str, int] = {}


class Mismatch(AssertionError):
    """The impl answered or changed state in a way no spec outcome allows."""


def _responses(pairs: Any) -> tuple[Any, ...]:
    return tuple(sorted(((str(ref), body) for ref, body in pairs), key=lambda item: item[0]))


def _spec_classic_timers(state: Any) -> tuple[Any, ...]:
    group = state.consumer.group(GROUP)
    if group is None:
        return ()
    return tuple(sorted(group.classic_join_deadlines)), tuple(sorted(group.classic_sync_deadlines))


def _impl_classic_timers(impl: ConsumerGroupCoordinator) -> tuple[Any, ...]:
    group = impl.group(GROUP)
    if group is None:
        return ()
    join = sorted((m, d) for (k, m), d in group.classic_deadlines.items() if k == CLASSIC_JOIN)
    sync = sorted((m, d) for (k, m), d in group.classic_deadlines.items() if k != CLASSIC_JOIN)
    return tuple(join), tuple(sync)


def _spec_key(outcome: MixedOutcome) -> tuple[Any, ...]:
    pairs = ((reply.ref, reply.body) for reply in outcome.responses)
    return (
        _responses(pairs),
        spec_full_projection(outcome.state.consumer),
        _spec_classic_timers(outcome.state),
    )


class ClassicMembersAgainstSpec(RuleBasedStateMachine):
    """The impl and the mixed spec under the same inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.now_ms = 0
        self.classic_ids: list[str] = []
        self.log: list[ConsumerGroupRecord] = []
        self.diverged = False

    @initialize(interval=st.sampled_from([0, 1_000]), first=st.sampled_from([("s",), ("a", "s")]))
    def configure(self, interval: int, first: tuple[str, ...]) -> None:
        config = ConsumerGroupConfig(
            max_size=4, assignment_interval_ms=interval, migration_policy="disabled"
        )
        self.spec = MixedCoordinatorSpec(config)
        self.state = self.spec.initial_state()
        self.clock = ManualClock(0)
        numbers = count()
        self.impl = ConsumerGroupCoordinator(
            impl_config(config),
            clock=self.clock,
            new_member_id=spec_member_ids(),
            new_classic_member_id=lambda prefix: f"{prefix}-{next(numbers)}",
            records=lambda _group, written: self.log.extend(written),
        )
        self.impl_config = impl_config(config)
        for member in first:
            self._consumer_join(member, ("t0", "t1"))

    # -- plumbing ---------------------------------------------------------------------------

    def _step(self, event: Any, impl_input: Any) -> MixedOutcome:
        outcomes = self.spec.step(self.state, event, self.now_ms)
        self.clock.set(self.now_ms)
        if isinstance(impl_input, tuple):
            self.impl.handle(REF, impl_input[0])
        else:
            self.impl.fire(impl_input)
        assert self.impl.outbox is not None
        actual = (
            _responses(self.impl.outbox.take().items()),
            impl_full_projection(self.impl),
            _impl_classic_timers(self.impl),
        )
        for outcome in outcomes:
            if _spec_key(outcome) == actual:
                self.state = outcome.state
                for rule_id in outcome.rules:
                    SEEN[rule_id] = SEEN.get(rule_id, 0) + 1
                return outcome
        allowed = "\n".join(f"  allowed: {_spec_key(o)!r}" for o in outcomes[:3])
        self.diverged = True
        raise Mismatch(f"after {event!r}\n  impl: {actual!r}\n{allowed}")

    def teardown(self) -> None:
        """The run's last state survives a restart too (unless the run already diverged)."""
        if hasattr(self, "impl") and not self.diverged:
            self._check_restart("the last step")

    def _check_restart(self, event: Any) -> None:
        """The groups a restart rebuilds from the impl's records are those the spec's log
        replays to (timers aside: a load arms them anew)."""
        restarted = ConsumerGroupCoordinator(self.impl_config, clock=ManualClock(self.now_ms))
        restarted.load(self.log)
        groups = replay(self.state.consumer.log).groups
        rebuilt = ConsumerGroupsState(groups_by_id=tuple((g.group_id, g) for g in groups))
        impl_groups = _without_timers(impl_projection(restarted))
        if impl_groups != _without_timers(spec_projection(rebuilt)):
            raise Mismatch(
                f"after {event!r} the impl's records rebuild {impl_groups!r}, the spec's log "
                f"{_without_timers(spec_projection(rebuilt))!r}"
            )

    def _classic(self, request: Any) -> MixedOutcome:
        return self._step(Received(REF, request), (request,))

    def _consumer(self, request: ConsumerGroupHeartbeatRequest) -> None:
        self._step(RequestArrived(REF, request), (request,))

    def _group(self) -> Any:
        return self.state.consumer.group(GROUP)

    def _has_members(self) -> bool:
        group = self._group()
        return group is not None and bool(group.members_by_id)

    def _consumer_join(self, member: str, topics: tuple[str, ...]) -> None:
        self._consumer(
            ConsumerGroupHeartbeatRequest(
                GROUP,
                member,
                0,
                instance_id=INSTANCES.get(member),
                rebalance_timeout_ms=20_000,
                subscribed_topic_names=topics,
                topic_partitions=(),
            )
        )

    # -- consumer-protocol members -------------------------------------------------------------

    @rule(member=st.sampled_from(CONSUMERS), topics=st.sampled_from([("t0",), ("t0", "t1")]))
    def consumer_join(self, member: str, topics: tuple[str, ...]) -> None:
        self._consumer_join(member, topics)

    @rule(member=st.sampled_from(CONSUMERS), honest=st.booleans())
    def consumer_heartbeat(self, member: str, honest: bool) -> None:
        group = self._group()
        known = None if group is None else group.member(member)
        if known is None:
            return
        held = known.assigned if honest else known.owned
        self._consumer(
            ConsumerGroupHeartbeatRequest(
                GROUP,
                member,
                known.member_epoch,
                instance_id=INSTANCES.get(member),
                topic_partitions=owned(*sorted(str(p) for p in held)),
            )
        )

    @rule(member=st.sampled_from(CONSUMERS), epoch=st.sampled_from([-1, -2]))
    def consumer_leave(self, member: str, epoch: int) -> None:
        group = self._group()
        instance_id = INSTANCES.get(member)
        if group is None or group.member(member) is None or (epoch == -2 and not instance_id):
            return
        self._consumer(ConsumerGroupHeartbeatRequest(GROUP, member, epoch, instance_id=instance_id))

    # -- classic members ------------------------------------------------------------------------

    def _pick_classic(self, data: st.DataObject) -> str:
        group = self._group()
        present = [m for m in self.classic_ids if group is not None and group.member(m)]
        choice = data.draw(st.integers(0, 9), label="which member")
        if present and choice > 2:
            return str(data.draw(st.sampled_from(present), label="classic member"))
        if self.classic_ids and choice > 0:
            return str(data.draw(st.sampled_from(self.classic_ids), label="earlier member"))
        return str(data.draw(st.sampled_from(["", "ghost-1"]), label="other id"))

    @rule(
        data=st.data(),
        report=st.sampled_from(["held", "held", "none", "all"]),
        version=st.sampled_from([3, 5]),
        topics=st.sampled_from([("t0", "t1"), ("t0",)]),
        name=st.sampled_from(["range", "range", "roundrobin"]),
        instance_id=st.sampled_from([None, None, "i1", "i2"]),
        then_sync=st.booleans(),
    )
    def classic_join(
        self,
        data: st.DataObject,
        report: str,
        version: int,
        topics: tuple[str, ...],
        name: str,
        instance_id: str | None,
        then_sync: bool,
    ) -> None:
        if not self._has_members():
            return
        group = self._group()
        member_id = self._pick_classic(data)
        # A static join mostly names no id (a new static member, or one replacing the holder),
        # else the holder's (a rejoin) or another's; a dynamic one sometimes none.
        holder = None if instance_id is None else group.static_member(instance_id)
        choices = ["none", "other", "other", "other"]
        if instance_id is not None:
            choices = ["none", "none", "holder", "other"]
        who = data.draw(st.sampled_from(choices), label="id")
        if who == "none" or (who == "holder" and holder is None):
            member_id = ""
        elif who == "holder" and holder is not None:
            member_id = holder.member_id
        known = group.member(member_id)
        if report == "held" and known is not None:
            reported = sorted(str(p) for p in known.owned)
        elif report == "all":
            reported = list(PARTITIONS)
        else:
            reported = []
        request = JoinGroupRequest(
            GROUP,
            member_id,
            "consumer",
            (JoinGroupProtocol(name, metadata(reported, topics)),),
            10_000,
            20_000,
            group_instance_id=instance_id,
            # An instance id needs v5 (past the versions with a MEMBER_ID_REQUIRED round).
            api_version=version if instance_id is None else 5,
        )
        outcome = self._classic(request)
        for reply in outcome.responses:
            # The id a MEMBER_ID_REQUIRED answer hands out, or the one a v3 join got.
            given = getattr(reply.body, "member_id", "")
            if given and given not in self.classic_ids:
                self.classic_ids.append(given)
        if instance_id is not None:
            _count_static_join(group, member_id, instance_id, outcome)
            self._check_restart(request)
        joined = outcome.responses[0].body
        if then_sync and joined.error_code is ErrorCode.NONE:
            # What a client does next: SyncGroup at the generation the join gave.
            sync = classic_sync(joined.member_id, joined.generation_id, name=name)
            self._classic(replace(sync, group_instance_id=instance_id))
            # Another classic member's next heartbeat: the join may have moved the target.
            group = self._group()
            others = [m for m in self.classic_ids if m != joined.member_id and group.member(m)]
            if others:
                other = group.member(others[0])
                self._classic(classic_beat(other.member_id, other.member_epoch))

    @rule(data=st.data(), off=st.sampled_from([0, 0, 0, 1, -1]))
    def classic_sync(self, data: st.DataObject, off: int) -> None:
        if not self._has_members():
            return
        member_id = self._pick_classic(data)
        member = self._group().member(member_id)
        generation = (member.member_epoch if member is not None else 1) + off
        instance_id = self._instance_of(data, member)
        self._classic(replace(classic_sync(member_id, generation), group_instance_id=instance_id))

    @rule(data=st.data(), off=st.sampled_from([0, 0, 0, 1, -1]))
    def classic_heartbeat(self, data: st.DataObject, off: int) -> None:
        if not self._has_members():
            return
        member_id = self._pick_classic(data)
        member = self._group().member(member_id)
        generation = (member.member_epoch if member is not None else 1) + off
        self._classic(classic_beat(member_id, generation, self._instance_of(data, member)))

    @rule(data=st.data())
    def classic_leave(self, data: st.DataObject) -> None:
        if not self._has_members():
            return
        member_id = self._pick_classic(data)
        member = self._group().member(member_id)
        instance_id = self._instance_of(data, member)
        if instance_id is None:
            self._classic(classic_leave(member_id))
            return
        # A static member's leave, by its member id or by its instance id alone.
        named = member_id if data.draw(st.booleans(), label="with member id") else ""
        self._classic(LeaveGroupRequest(GROUP, (MemberIdentity(named, instance_id),)))

    def _instance_of(self, data: st.DataObject, member: Any) -> str | None:
        """The instance id a request names: mostly the member's own, sometimes none."""
        if member is None or member.instance_id is None:
            return None
        return str(member.instance_id) if data.draw(st.booleans(), label="static") else None

    # -- time -----------------------------------------------------------------------------------

    @rule(data=st.data())
    def fire_a_timer(self, data: st.DataObject) -> None:
        timers: list[tuple[Any, int]] = list(armed_timers(self.state.consumer))
        classic = list(self.spec.armed_classic_member_timers(self.state))
        # A classic member's join or sync timeout half the time when one is armed (the session
        # timers, old ids' included, outnumber them).
        if classic and data.draw(st.booleans(), label="a classic member's timer"):
            timers = classic
        else:
            timers += classic
        if not timers:
            return
        event, deadline = data.draw(st.sampled_from(timers), label="timer")
        self.now_ms = max(self.now_ms, deadline)
        self._step(event, _impl_timer(event))


def _without_timers(projection: Any) -> Any:
    """Each group's projection without its session and rebalance timers (its last two)."""
    return tuple(group[:-2] for group in projection)


def _count_static_join(group: Any, member_id: str, instance_id: str, outcome: MixedOutcome) -> None:
    """Count which path of a static classic join the step took (for the coverage test)."""
    error = outcome.responses[0].body.error_code
    holder = group.static_member(instance_id)
    paths = []
    if error is not ErrorCode.NONE:
        paths.append(error.name)
    elif member_id and holder is not None:
        paths.append("rejoin of the holder")
    elif holder is None:
        paths.append("new member")
    else:
        kind = "classic" if holder.uses_classic_protocol else "consumer-protocol"
        paths.append(f"replaced a {kind} member")
        others = [m for m in group.iter_members() if m.member_id != holder.member_id]
        if not holder.uses_classic_protocol and all(m.uses_classic_protocol for m in others):
            paths.append("replaced the last consumer-protocol member")
    for path in paths:
        SEEN[f"static:{path}"] = SEEN.get(f"static:{path}", 0) + 1


def _impl_timer(event: Any) -> Any:
    kinds = {
        SessionTimeoutExpired: ImplSessionTimeout,
        RebalanceTimeoutExpired: ImplRebalanceTimeout,
        ClassicJoinTimeoutExpired: ImplJoinTimeout,
        ClassicSyncTimeoutExpired: ImplSyncTimeout,
    }
    return kinds[type(event)](event.group_id, event.member_id)


ClassicMembersAgainstSpec.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestClassicMembersAgainstSpec = ClassicMembersAgainstSpec.TestCase


def test_the_runs_reach_the_classic_member_rules():
    """The comparison covers joins, syncs with an assignment, rejoin requests, leaves and the
    classic members' timers, not only refusals."""
    if not SEEN:
        TestClassicMembersAgainstSpec("runTest").runTest()
    wanted = {
        "cg_classic.join_new_member",
        "cg_classic.join_known_member",
        "cg_classic.join_member_id_required",
        "cg_classic.sync_assignment",
        "cg_classic.heartbeat_rejoin",
        "cg_classic.heartbeat_ok",
        "cg_classic.leave",
        "cg_classic.illegal_generation",
        "cg_classic.timer_sync_expired",
        "cg_classic.static_new_member",
        "cg_classic.static_member_replaced",
        "static:new member",
        "static:replaced a consumer-protocol member",
        "static:replaced a classic member",
        "static:replaced the last consumer-protocol member",
        "static:rejoin of the holder",
        "static:UNKNOWN_MEMBER_ID",
        "static:FENCED_INSTANCE_ID",
    }
    assert wanted <= set(SEEN), (sorted(wanted - set(SEEN)), {k: SEEN.get(k) for k in wanted})


# The impl's record kind for each of the spec's record keys.
_KINDS = {
    GroupMetadataKey: "group",
    MemberMetadataKey: "member",
    TargetAssignmentMemberKey: "target",
    TargetAssignmentMetadataKey: "target-epoch",
    CurrentAssignmentKey: "current",
}


def test_a_static_classic_replacement_is_written_as_the_spec_writes_it():
    """A classic JoinGroup taking static member s's instance id writes the old id's tombstones
    and the new id's records, the keys the specification's step writes; a restart brings back
    the new id holding the instance id."""
    machine = ClassicMembersAgainstSpec()
    machine.configure(interval=0, first=("a", "s"))
    before = machine.state.consumer.group(GROUP)
    logged = len(machine.log)
    join = JoinGroupRequest(
        GROUP,
        "",
        "consumer",
        (JoinGroupProtocol("range", metadata((), ("t0", "t1"))),),
        10_000,
        20_000,
        group_instance_id="i1",
        api_version=5,
    )
    outcome = machine._classic(join)
    new_id = outcome.responses[0].body.member_id
    assert "cg_classic.static_member_replaced" in outcome.rules
    written = {
        (r.key[0], r.key[2] if len(r.key) > 2 else None, r.value is None)
        for r in machine.log[logged:]
    }
    after = machine.state.consumer.group(GROUP)
    expected = {
        (_KINDS[type(r.key)], getattr(r.key, "member_id", None), r.is_tombstone)
        for r in records_between(machine.spec.config, before, after)
    }
    assert written == expected
    assert {("member", "s", True), ("member", new_id, False), ("target", new_id, False)} <= written
    restarted = ConsumerGroupCoordinator(machine.impl_config, clock=ManualClock(0))
    restarted.load(machine.log)
    group = restarted.group(GROUP)
    assert group is not None and "s" not in group.members
    holder = group.static_member("i1")
    assert holder is not None and holder.member_id == new_id and holder.classic is not None
