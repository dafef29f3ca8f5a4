"""Hypothesis drives one consumer with random events and plausible coordinator answers; every
consumer invariant and action property holds after every step (ConsumerDriver checks them)."""

from __future__ import annotations

from collections import Counter

from consumer_driver import ConsumerDriver, member_metadata, tp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from groupspec.spec.assignment import Cluster
from groupspec.spec.consumer import (
    Close,
    CommitRequested,
    Disconnected,
    HeartbeatDue,
    MetadataChanged,
    Poll,
    PollTimeoutExpired,
    ResponseReceived,
    SessionTimeoutExpired,
    SubscriptionChanged,
)
from groupspec.spec.consumer.state import RequestKind
from groupspec.spec.consumer_protocol import encode_assignment
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.responses import (
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitResponse,
    SyncGroupResponse,
)

E = ErrorCode
ALL_PARTITIONS = (*(tp("t", p) for p in range(4)), tp("u", 0), tp("u", 1))
# Answers by request kind; repeats weight the ordinary ones so walks reach Stable often.
FIND_ANSWERS = [E.NONE] * 12 + [E.COORDINATOR_NOT_AVAILABLE, E.GROUP_AUTHORIZATION_FAILED]
JOIN_ERRORS = [
    E.UNKNOWN_MEMBER_ID,
    E.COORDINATOR_NOT_AVAILABLE,
    E.NOT_COORDINATOR,
    E.COORDINATOR_LOAD_IN_PROGRESS,
    E.REBALANCE_IN_PROGRESS,
    E.GROUP_MAX_SIZE_REACHED,
]
SYNC_ERRORS = [
    E.REBALANCE_IN_PROGRESS,
    E.UNKNOWN_MEMBER_ID,
    E.ILLEGAL_GENERATION,
    E.COORDINATOR_NOT_AVAILABLE,
    E.UNKNOWN_SERVER_ERROR,
]
HEARTBEAT_ANSWERS = [E.NONE] * 6 + [
    E.REBALANCE_IN_PROGRESS,
    E.REBALANCE_IN_PROGRESS,
    E.ILLEGAL_GENERATION,
    E.UNKNOWN_MEMBER_ID,
    E.NOT_COORDINATOR,
    E.FENCED_INSTANCE_ID,
    E.GROUP_AUTHORIZATION_FAILED,
]
COMMIT_ANSWERS = [E.NONE] * 4 + [
    E.REBALANCE_IN_PROGRESS,
    E.ILLEGAL_GENERATION,
    E.UNKNOWN_MEMBER_ID,
    E.NOT_COORDINATOR,
    E.COORDINATOR_LOAD_IN_PROGRESS,
    E.FENCED_INSTANCE_ID,
    E.OFFSET_METADATA_TOO_LARGE,
]
CONFIGS = [
    {"cooperative": False, "static": False},
    {"cooperative": False, "static": True},
    {"cooperative": True, "static": False},
    {"cooperative": True, "static": True},
    {"cooperative": False, "static": False, "join_group_version": 3, "subscription_version": 0},
    {"cooperative": True, "static": False, "subscription_version": 1},
]

RULES_REACHED: Counter[str] = Counter()


class ConsumerUnderRandomCoordinator(RuleBasedStateMachine):
    """One consumer; a coordinator that answers every request with something it could send."""

    def __init__(self) -> None:
        super().__init__()
        self.driver: ConsumerDriver | None = None
        self.requests: dict[int, object] = {}
        self.coordinator_generation = 0
        self.next_member = 0

    @initialize(options=st.sampled_from(CONFIGS))
    def start(self, options: dict) -> None:
        self.driver = ConsumerDriver(topics=("t", "u"), **options)

    def _step(self, event: object) -> None:
        assert self.driver is not None
        outcome = self.driver.step(event)
        RULES_REACHED.update(outcome.rules)
        for send in outcome.sends:
            self.requests[send.correlation_id] = send.request

    @rule(data=st.data())
    def something_happens(self, data: st.DataObject) -> None:
        """One step: mostly answers and polls, sometimes timers, rarely the application or faults."""
        assert self.driver is not None
        state = self.driver.state
        spec = self.driver.spec
        enabled = spec.enabled_events(state)
        timers = [
            e
            for e in enabled
            if isinstance(e, (HeartbeatDue, SessionTimeoutExpired, PollTimeoutExpired))
        ]
        options = ["answer"] * 8 if state.in_flight else []
        if Poll() in enabled:
            options += ["poll"] * 6 + ["application"] * 2
        options += ["timer"] * (2 if timers else 0)
        faults = [e for e in enabled if isinstance(e, (Close, Disconnected))]
        options += ["fault"] if faults else []
        if not options:
            return
        choice = data.draw(st.sampled_from(options), label="what")
        if choice == "answer":
            self._coordinator_answers(data)
        elif choice == "poll":
            self._step(Poll())
        elif choice == "timer":
            self._step(data.draw(st.sampled_from(timers), label="timer"))
        elif choice == "application":
            self._application_change(data)
        else:
            # Closing ends the walk, so it is much rarer than a dropped connection.
            close = Close() in faults and data.draw(st.integers(0, 9), label="close?") == 0
            self._step(Close() if close else faults[-1])

    def _application_change(self, data: st.DataObject) -> None:
        choice = data.draw(st.sampled_from(["commit", "commit", "subscribe", "metadata"]))
        if choice == "commit":
            partitions = data.draw(st.sets(st.sampled_from(ALL_PARTITIONS), min_size=1, max_size=3))
            offsets = tuple((p, data.draw(st.integers(0, 9))) for p in sorted(partitions))
            self._step(CommitRequested(offsets))
        elif choice == "subscribe":
            self._step(SubscriptionChanged(data.draw(st.sampled_from([("t",), ("t", "u")]))))
        else:
            count = data.draw(st.sampled_from([2, 4]))
            self._step(MetadataChanged(Cluster.of({"t": count, "u": 2})))

    def _coordinator_answers(self, data: st.DataObject) -> None:
        assert self.driver is not None
        entry = data.draw(st.sampled_from(self.driver.state.in_flight), label="request")
        request = self.requests[entry.correlation_id]
        body = self._answer(data, entry.kind, request)
        self._step(ResponseReceived(entry.correlation_id, body))

    def _answer(self, data: st.DataObject, kind: RequestKind, request: object) -> object:
        draw = data.draw
        if kind is RequestKind.FIND_COORDINATOR:
            return FindCoordinatorResponse(draw(st.sampled_from(FIND_ANSWERS)), "g", 0)
        if kind is RequestKind.JOIN_GROUP:
            return self._join_answer(data, request)
        if kind is RequestKind.SYNC_GROUP:
            if draw(st.integers(0, 3)) == 0:
                return SyncGroupResponse(draw(st.sampled_from(SYNC_ERRORS)))
            assigned = draw(st.sets(st.sampled_from(ALL_PARTITIONS), max_size=4))
            return SyncGroupResponse(
                E.NONE, "consumer", request.protocol_name, encode_assignment(assigned)
            )
        if kind is RequestKind.HEARTBEAT:
            return HeartbeatResponse(draw(st.sampled_from(HEARTBEAT_ANSWERS)))
        if kind is RequestKind.OFFSET_COMMIT:
            error = draw(st.sampled_from(COMMIT_ANSWERS))
            return OffsetCommitResponse(
                tuple(
                    OffsetCommitPartitionResponse(p.topic, p.partition, error)
                    for p in request.partitions
                )
            )
        return LeaveGroupResponse(draw(st.sampled_from([E.NONE, E.UNKNOWN_MEMBER_ID])))

    def _join_answer(self, data: st.DataObject, request: object) -> JoinGroupResponse:
        draw = data.draw
        choices = ["ok", "ok", "ok", "error"]
        dynamic_newcomer = request.member_id == "" and request.group_instance_id is None
        if dynamic_newcomer and request.api_version >= 4:
            choices += ["member_id_required"] * 3
        choice = draw(st.sampled_from(choices))
        if choice == "error":
            return JoinGroupResponse(draw(st.sampled_from(JOIN_ERRORS)))
        member_id = request.member_id or self._fresh_member_id()
        if choice == "member_id_required":
            return JoinGroupResponse(E.MEMBER_ID_REQUIRED, member_id=member_id)
        self.coordinator_generation += 1
        protocol = request.protocols[0]
        leader = draw(st.sampled_from([member_id, "other"]))
        members = ()
        if leader == member_id:
            members = (
                JoinGroupResponseMember(member_id, request.group_instance_id, protocol.metadata),
                JoinGroupResponseMember("other", None, member_metadata(("t",))),
            )
        return JoinGroupResponse(
            E.NONE,
            member_id=member_id,
            generation_id=self.coordinator_generation,
            protocol_type="consumer",
            protocol_name=protocol.name,
            leader=leader,
            members=members,
        )

    def _fresh_member_id(self) -> str:
        self.next_member += 1
        return f"c1-{self.next_member}"


ConsumerUnderRandomCoordinator.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
TestConsumerUnderRandomCoordinator = ConsumerUnderRandomCoordinator.TestCase


def test_random_walks_reach_the_main_client_rules():
    """Run after the state machine: the walks reached stable membership and every error path
    the random coordinator can produce."""
    if not RULES_REACHED:
        TestConsumerUnderRandomCoordinator().runTest()
    expected = {
        "client.sync.stable",
        "client.join.member_id_required",
        "client.commit.sent",
        "client.commit.reset_generation",
        "client.coordinator.join_future_failed",
        "client.prepare.partitions_lost",
        "client.sync.assignment_mismatch",
    }
    assert expected <= set(RULES_REACHED), expected - set(RULES_REACHED)
