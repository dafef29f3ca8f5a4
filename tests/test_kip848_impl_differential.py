"""The optimized consumer-protocol coordinator (impl/kip848/) against its specification
(spec/kip848/), step by step: Hypothesis sends both the same random joins, heartbeats (at the
right epoch, the previous or a wrong one, reporting any owned partitions), subscription
changes, regular-expression subscriptions (an expression matching one topic, all, none, one RE2
does not compile, and "" dropping it) and the completion of their resolutions, leaves, static
replacements, describes, timer firings and clock advances, offset commits and fetches (by members at their epoch, an older or a newer one, by unknown members and
by admins, at OffsetCommit v8 and v9), ListGroups and DeleteGroups, and after every step the
impl's responses and full state projection (epochs, members with their epochs, states, assigned
and pending partitions and KIP-1251 assignment epochs, the target, the timers, the committed
offsets, the members' expressions, the resolved ones and a resolution under way) must equal those of one outcome the spec allows (conformance/kip848_differential.py). Where the spec allows several
(assignor ties, every balanced uniform assignment, every order of dynamic members for range),
any of them is accepted and the run continues from the impl's.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from kip848_helpers import (
    ASSIGNORS,
    DYNAMIC,
    GROUP,
    PARTITIONS,
    REF,
    STATIC,
    TOPICS,
    owned,
)

from groupspec.conformance.kip848_differential import (
    Kip848ConformanceError,
    Kip848Differential,
    StepReport,
)
from groupspec.impl.clock import ManualClock
from groupspec.impl.kip848 import ConsumerGroupCoordinator
from groupspec.spec.kip848 import ConsumerGroupConfig, RequestArrived
from groupspec.spec.kip848.events import RegexResolutionCompleted
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import DeleteGroupsResponse, OffsetCommitResponse

SEEN: dict[str, int] = {"steps": 0, "choices": 0, "fired": 0}
# The regular-expression rules (spec/kip848/rules.py) the compared steps fired, by name.
REGEX_RULES: dict[str, int] = {}
# Over the configured topics t0 and t1: one topic, both, none, one RE2 does not compile (a
# look-ahead), and "" (none: drops the member's).
REGEXES = ("t0", "t.*", "x.*", "t(?=0)", "")
# The errors the offset paths answered with, by name: the runs must reach each of them.
OFFSET_ANSWERS: dict[str, int] = {}


class ImplAgainstSpec(RuleBasedStateMachine):
    """Both coordinators under the same random inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.pair = Kip848Differential()
        self.now_ms = 0
        self.report: StepReport | None = None

    @initialize(
        interval=st.sampled_from([0, 1_000]),
        refresh=st.sampled_from([600_000, 15_000]),
        assignors=st.sampled_from([("uniform", "range"), ("range", "uniform")]),
        founders=st.lists(
            st.tuples(st.sampled_from((*DYNAMIC, "s1", "s3")), TOPICS, ASSIGNORS),
            min_size=1,
            max_size=3,
        ),
    )
    def configure(self, interval, refresh, assignors, founders):  # type: ignore[no-untyped-def]
        self.pair = Kip848Differential(
            ConsumerGroupConfig(
                max_size=4,
                assignment_interval_ms=interval,
                assignors=assignors,
                regex_refresh_interval_ms=refresh,
            )
        )
        # Start from a group with members, so that runs spend their steps inside one.
        for member, topics, assignor in founders:
            self.join(member, topics, assignor, False)

    def _send(self, request: Any) -> None:
        report = self.report = self.pair.step(RequestArrived(REF, request), self.now_ms)
        SEEN["steps"] += 1
        SEEN["choices"] += report.allowed > 1
        self._count_regex_rules()

    def _count_regex_rules(self) -> None:
        assert self.report is not None
        for name in self.report.taken.rules:
            if name.startswith("cg_regex."):
                REGEX_RULES[name] = REGEX_RULES.get(name, 0) + 1

    def _member(self, member_id: str):  # type: ignore[no-untyped-def]
        group = self.pair.state.group(GROUP)
        return None if group is None else group.member(member_id)

    def _pick(self, data: st.DataObject, member: str) -> str:
        group = self.pair.state.group(GROUP)
        current = sorted(group.members) if group is not None else []
        if current and data.draw(st.integers(0, 3), label="pick a member") > 0:
            return data.draw(st.sampled_from(current), label="member")
        return member

    @rule(
        member=st.sampled_from(DYNAMIC + tuple(m for m, _ in STATIC)),
        topics=TOPICS,
        assignor=ASSIGNORS,
        v0=st.booleans(),
    )
    def join(self, member, topics, assignor, v0):  # type: ignore[no-untyped-def]
        instance = dict(STATIC).get(member)
        self._send(
            ConsumerGroupHeartbeatRequest(
                GROUP,
                "" if v0 and member == "a" else member,
                0,
                instance_id=instance,
                rebalance_timeout_ms=20_000,
                subscribed_topic_names=topics,
                server_assignor=assignor,
                topic_partitions=(),
                api_version=0 if v0 else 1,
            )
        )

    @rule(
        data=st.data(),
        member=st.sampled_from(DYNAMIC + tuple(m for m, _ in STATIC)),
        epoch=st.sampled_from(["current", "current", "previous", "other"]),
        report=st.one_of(st.none(), st.sets(st.sampled_from(PARTITIONS))),
        topics=st.one_of(st.none(), st.none(), TOPICS),
        full=st.booleans(),
        regex=st.sampled_from((None, None, None, *REGEXES)),
    )
    def heartbeat(self, data, member, epoch, report, topics, full, regex):  # type: ignore[no-untyped-def]
        member = self._pick(data, member)
        known = self._member(member)
        if epoch == "current" and known is not None:
            number = max(known.member_epoch, 1)
        elif epoch == "previous" and known is not None:
            number = max(known.previous_member_epoch, 1)
        else:
            number = data.draw(st.integers(1, 6), label="epoch")
        if report is None:
            partitions = None
        elif known is not None and data.draw(st.integers(0, 2), label="honest") > 0:
            held = known.owned if data.draw(st.booleans(), label="with revoked") else known.assigned
            partitions = owned(*sorted(str(p) for p in held))
        else:
            partitions = owned(*sorted(report))
        self._send(
            ConsumerGroupHeartbeatRequest(
                GROUP,
                member,
                number,
                instance_id=dict(STATIC).get(member),
                rebalance_timeout_ms=20_000 if full else -1,
                subscribed_topic_names=topics,
                subscribed_topic_regex=regex,
                topic_partitions=partitions,
            )
        )

    @rule(
        member=st.sampled_from(DYNAMIC + tuple(m for m, _ in STATIC)),
        regex=st.sampled_from(REGEXES),
        topics=st.one_of(st.none(), TOPICS),
    )
    def join_with_regex(self, member, regex, topics):  # type: ignore[no-untyped-def]
        self._send(
            ConsumerGroupHeartbeatRequest(
                GROUP,
                member,
                0,
                instance_id=dict(STATIC).get(member),
                rebalance_timeout_ms=20_000,
                subscribed_topic_names=topics,
                subscribed_topic_regex=regex,
                topic_partitions=(),
            )
        )

    @rule(ms=st.sampled_from([0, 100, 1_000]))
    def resolution_completes(self, ms):  # type: ignore[no-untyped-def]
        group = self.pair.state.group(GROUP)
        if group is None or group.regex_resolution is None:
            return
        self.now_ms += ms
        self.report = self.pair.step(RegexResolutionCompleted(GROUP), self.now_ms)
        SEEN["resolved"] = SEEN.get("resolved", 0) + 1
        self._count_regex_rules()

    @rule(
        data=st.data(),
        member=st.sampled_from(DYNAMIC + tuple(m for m, _ in STATIC)),
        temporarily=st.booleans(),
    )
    def leave(self, data, member, temporarily):  # type: ignore[no-untyped-def]
        member = self._pick(data, member)
        instance = dict(STATIC).get(member)
        epoch = -2 if temporarily and instance is not None else -1
        self._send(ConsumerGroupHeartbeatRequest(GROUP, member, epoch, instance_id=instance))

    @rule(data=st.data())
    def replace_an_away_static_member(self, data):  # type: ignore[no-untyped-def]
        group = self.pair.state.group(GROUP)
        away = [m for m in group.iter_members() if m.member_epoch == -2] if group else []
        if not away:
            return
        instance = data.draw(st.sampled_from(away), label="away").instance_id
        member = data.draw(st.sampled_from([m for m, i in STATIC if i == instance]), label="id")
        self._send(
            ConsumerGroupHeartbeatRequest(
                GROUP,
                member,
                0,
                instance_id=instance,
                rebalance_timeout_ms=20_000,
                subscribed_topic_names=data.draw(TOPICS, label="topics"),
                topic_partitions=(),
            )
        )

    @rule(member=st.sampled_from(DYNAMIC), epoch=st.sampled_from([0, -3]))
    def malformed(self, member, epoch):  # type: ignore[no-untyped-def]
        self._send(ConsumerGroupHeartbeatRequest(GROUP, member, epoch, topic_partitions=()))

    @rule(data=st.data())
    def fire_a_timer(self, data):  # type: ignore[no-untyped-def]
        timers = armed_timers(self.pair.state)
        if not timers:
            return
        event, deadline = data.draw(st.sampled_from(timers), label="timer")
        self.now_ms = max(self.now_ms, deadline)
        self.pair.step(event, self.now_ms)
        SEEN["fired"] += 1

    @rule(ms=st.sampled_from([1, 1_000, 1_000, 5_000, 20_000, 45_000]))
    def time_passes(self, ms):  # type: ignore[no-untyped-def]
        # The impl fires what fell due on its own heap; the spec must agree.
        self.now_ms += ms
        SEEN["fired"] += len(self.pair.advance_to(self.now_ms))

    @rule()
    def describe(self):  # type: ignore[no-untyped-def]
        self._send(ConsumerGroupDescribeRequest((GROUP, "other", "")))

    @rule(
        data=st.data(),
        member=st.sampled_from(DYNAMIC + tuple(m for m, _ in STATIC) + ("",)),
        epoch=st.sampled_from(["current", "current", "previous", "older", "newer", "admin"]),
        partitions=st.sets(st.sampled_from(PARTITIONS), min_size=1, max_size=3),
        held=st.booleans(),
        version=st.sampled_from([9, 9, 9, 8]),
        group=st.sampled_from([GROUP, GROUP, GROUP, "other", ""]),
    )
    def commit(self, data, member, epoch, partitions, held, version, group):  # type: ignore[no-untyped-def]
        member = self._pick(data, member)
        known = self._member(member)
        number = self._epoch(data, known, epoch)
        if number < 0 and self.pair.state.group(group) is None:
            # A simple classic group would be created (an empty group id names no consumer group
            # either): the classic coordinator's case.
            return
        if held and known is not None and known.owned:
            chosen = sorted(str(p) for p in known.owned)
        else:
            chosen = sorted(partitions)
        entries = tuple(
            OffsetCommitPartition(topic, int(number_), committed_offset=offset)
            for offset, (topic, number_) in enumerate(
                (name.rsplit("-", 1)[0], name.rsplit("-", 1)[1]) for name in chosen
            )
        )
        request = OffsetCommitRequest(
            group,
            entries,
            generation_id=number,
            member_id="" if epoch == "admin" else member,
            api_version=version,
        )
        self._send(request)
        self._count_answer()

    @rule(
        data=st.data(),
        member=st.sampled_from(DYNAMIC + tuple(m for m, _ in STATIC)),
        epoch=st.sampled_from(["current", "current", "previous", "newer", "admin"]),
        everything=st.booleans(),
        group=st.sampled_from([GROUP, GROUP, "other", ""]),
    )
    def fetch(self, data, member, epoch, everything, group):  # type: ignore[no-untyped-def]
        member = self._pick(data, member)
        number = self._epoch(data, self._member(member), epoch)
        partitions = None if everything else (TopicPartition("t0", 0), TopicPartition("t1", 0))
        self._send(
            OffsetFetchRequest(
                group,
                partitions,
                member_id=None if epoch == "admin" else member,
                member_epoch=number,
            )
        )
        self._count_answer()

    @rule(
        states=st.sampled_from([(), ("stable",), ("Empty", "assigning"), ("reconciling",)]),
        types=st.sampled_from([(), ("consumer",), ("classic",)]),
    )
    def list_groups(self, states, types):  # type: ignore[no-untyped-def]
        self._send(ListGroupsRequest(states, types))

    @rule(also=st.sampled_from([(), ("other",)]))
    def delete_groups(self, also):  # type: ignore[no-untyped-def]
        self._send(DeleteGroupsRequest((GROUP, *also)))
        self._count_answer()

    def _epoch(self, data: st.DataObject, known, epoch: str) -> int:  # type: ignore[no-untyped-def]
        if epoch == "admin":
            return -1
        if known is None:
            return data.draw(st.integers(0, 6), label="epoch")
        if epoch == "previous":
            return max(known.previous_member_epoch, 0)
        if epoch == "older":
            return data.draw(st.integers(0, max(known.member_epoch, 0)), label="older epoch")
        if epoch == "newer":
            return known.member_epoch + 1
        return known.member_epoch

    def _count_answer(self) -> None:
        assert self.report is not None
        for reply in self.report.taken.responses:
            body = reply.body
            if isinstance(body, OffsetCommitResponse):
                errors = [p.error_code for p in body.partitions]
            elif isinstance(body, DeleteGroupsResponse):
                errors = [r.error_code for r in body.results]
            else:
                errors = [body.error_code]
            for error in errors:
                OFFSET_ANSWERS[error.name] = OFFSET_ANSWERS.get(error.name, 0) + 1


ImplAgainstSpec.TestCase.settings = settings(
    max_examples=300,
    stateful_step_count=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestImplAgainstSpec = ImplAgainstSpec.TestCase


def test_the_differential_runs_take_choices_and_fire_timers():
    """The runs reach steps where the spec allows several outcomes, and fire timers: the
    comparison is not only of refusals."""
    if not SEEN["steps"]:
        TestImplAgainstSpec("runTest").runTest()
    assert SEEN["choices"] > 0 and SEEN["fired"] > 0, SEEN


def test_the_differential_runs_reach_every_offset_answer():
    """The offset, list and delete paths are compared on each of their answers: accepted,
    refused for a stale or unknown member, an unknown group (an empty id among them), an old version, a
    non-empty group."""
    if not SEEN["steps"]:
        TestImplAgainstSpec("runTest").runTest()
    wanted = {
        "NONE",
        "STALE_MEMBER_EPOCH",
        "UNKNOWN_MEMBER_ID",
        "GROUP_ID_NOT_FOUND",
        "ILLEGAL_GENERATION",
        "UNSUPPORTED_VERSION",
        "NON_EMPTY_GROUP",
    }
    assert wanted <= set(OFFSET_ANSWERS), OFFSET_ANSWERS


def test_the_differential_runs_subscribe_with_regular_expressions():
    """Every regular-expression rule is compared: an expression refused, subscribed before and
    after its resolution, dropped, its resolution deleted, a resolution started, completing
    with new topics (the group epoch bumped), with the same, and after its last subscriber
    left."""
    if not SEEN["steps"]:
        TestImplAgainstSpec("runTest").runTest()
    wanted = {
        "cg_regex.invalid",
        "cg_regex.subscribed_unresolved",
        "cg_regex.subscribed_resolved",
        "cg_regex.unsubscribed",
        "cg_regex.tombstone",
        "cg_regex.resolution_started",
        "cg_regex.resolved_changed",
        "cg_regex.resolved_unchanged",
        "cg_regex.resolution_dropped",
    }
    assert wanted <= set(REGEX_RULES), REGEX_RULES


def test_a_wrong_impl_is_caught():
    """The comparison fails on an impl that answers differently from the spec (here: one that
    hands out member epochs one too high)."""
    pair = Kip848Differential()
    impl = pair.impl
    original = impl._rt.respond

    def skewed(ref, body):  # type: ignore[no-untyped-def]
        if body.error_code is ErrorCode.NONE and body.member_epoch > 0:
            body = type(body)(
                body.error_code,
                member_id=body.member_id,
                member_epoch=body.member_epoch + 1,
                heartbeat_interval_ms=body.heartbeat_interval_ms,
                assignment=body.assignment,
            )
        original(ref, body)

    impl._rt.respond = skewed
    join = ConsumerGroupHeartbeatRequest(
        GROUP, "a", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t0",), topic_partitions=()
    )
    with pytest.raises(Kip848ConformanceError):
        pair.step(RequestArrived(REF, join), 0)


def test_a_stable_heartbeat_takes_the_fast_path():
    """A Stable member's heartbeat with nothing to change neither recomputes the target nor
    queues a timer entry: the heap does not grow with heartbeats."""
    clock = ManualClock(0)
    impl = ConsumerGroupCoordinator(clock=clock)
    impl.handle(
        REF,
        ConsumerGroupHeartbeatRequest(
            GROUP,
            "a",
            0,
            rebalance_timeout_ms=1,
            subscribed_topic_names=("t0",),
            topic_partitions=(),
        ),
    )
    group = impl.group(GROUP)
    assert group is not None and group.state.value == "Stable"
    target = group.target
    heap = impl.heap_size()
    for _ in range(100):
        clock.advance(10)
        impl.handle(REF, ConsumerGroupHeartbeatRequest(GROUP, "a", group.group_epoch))
    assert group.target is target
    assert impl.heap_size() == heap
