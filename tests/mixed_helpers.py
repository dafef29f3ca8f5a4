"""Shared helpers of the mixed-group tests: a coordinator holding classic and consumer groups,
classic requests and consumer heartbeats, and the states the scenarios start from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from kip848_helpers import join as cg_join
from kip848_helpers import tps

from groupspec.spec.assignment import Subscription
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer_protocol import (
    decode_assignment,
    encode_assignment,
    encode_subscription,
)
from groupspec.spec.events import JoinTimerExpired
from groupspec.spec.kip848 import ConsumerGroupConfig, RequestArrived
from groupspec.spec.kip848.mixed import MixedCoordinatorSpec, MixedOutcome
from groupspec.spec.kip848.mixed_state import MixedState
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.group_state import PREPARING_REBALANCE
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
    TopicPartition,
)

REF = RequestRef("client", 0)
ALL = ("t0-0", "t0-1", "t1-0")
CONFIG = ConsumerGroupConfig(assignment_interval_ms=0)


def mixed_spec(
    *, policy: str = "bidirectional", max_size: int | None = None, classic_max: int | None = None
) -> MixedCoordinatorSpec:
    """A mixed coordinator under `policy` (targets recomputed at every epoch bump)."""
    config = replace(CONFIG, migration_policy=policy)
    if max_size is not None:
        config = replace(config, max_size=max_size)
    classic = (
        CoordinatorConfig()
        if classic_max is None
        else CoordinatorConfig(group_max_size=classic_max)
    )
    return MixedCoordinatorSpec(config, classic)


SPEC = mixed_spec()


def send(
    state: MixedState, item: object, now_ms: int = 0, spec: MixedCoordinatorSpec = SPEC
) -> tuple[MixedOutcome, ...]:
    """Every outcome of a request (classic or consumer) or event in `state`."""
    event: object = item
    if isinstance(item, ConsumerGroupHeartbeatRequest):
        event = RequestArrived(REF, item)
    elif isinstance(
        item, JoinGroupRequest | SyncGroupRequest | HeartbeatRequest | LeaveGroupRequest
    ):
        event = Received(REF, item)
    elif isinstance(item, OffsetCommitRequest | OffsetFetchRequest):
        # A consumer group's offsets are the consumer-protocol coordinator's (spec/kip848/offsets.py).
        event = RequestArrived(REF, item)
    return spec.step(state, event, now_ms)  # type: ignore[arg-type]


def only(outcomes: tuple[MixedOutcome, ...]) -> MixedOutcome:
    """The one outcome of a step that takes no choice."""
    assert len(outcomes) == 1, [o.choices for o in outcomes]
    return outcomes[0]


def body(outcome: MixedOutcome) -> object:
    """The single response body of a step."""
    (reply,) = outcome.responses
    return reply.body


def partitions(*names: str) -> tuple[TopicPartition, ...]:
    """Sorted partitions from names such as 't0-1'."""
    return tuple(sorted(tps(*names)))


def metadata(owned: Iterable[str] = (), topics: tuple[str, ...] = ("t0", "t1")) -> bytes:
    """A ConsumerProtocolSubscription for `topics` reporting `owned`."""
    return encode_subscription(Subscription.of(topics, partitions(*owned)))


def classic_join(
    member_id: str,
    owned: Iterable[str] = (),
    *,
    protocol_type: str = "consumer",
    name: str = "range",
) -> JoinGroupRequest:
    """A classic JoinGroup (v9) subscribing to t0 and t1."""
    return JoinGroupRequest(
        "g", member_id, protocol_type, (JoinGroupProtocol(name, metadata(owned)),), 10_000, 20_000
    )


def classic_sync(
    member_id: str,
    generation: int,
    assignments: dict[str, tuple[str, ...]] | None = None,
    name: str = "range",
) -> SyncGroupRequest:
    """A classic SyncGroup; the leader's carries `assignments`."""
    entries = tuple(
        SyncGroupAssignment(m, encode_assignment(partitions(*names)))
        for m, names in (assignments or {}).items()
    )
    return SyncGroupRequest("g", generation, member_id, None, "consumer", name, entries)


def classic_beat(
    member_id: str, generation: int, instance_id: str | None = None
) -> HeartbeatRequest:
    """A classic Heartbeat."""
    return HeartbeatRequest("g", generation, member_id, instance_id)


def classic_leave(*member_ids: str) -> LeaveGroupRequest:
    """A classic LeaveGroup for `member_ids`."""
    return LeaveGroupRequest("g", tuple(MemberIdentity(m) for m in member_ids))


def leave(member_id: str, epoch: int = -1) -> ConsumerGroupHeartbeatRequest:
    """A consumer-protocol leave."""
    return ConsumerGroupHeartbeatRequest("g", member_id, epoch)


def assigned(assignment: bytes) -> frozenset[TopicPartition]:
    """The partitions of a stored or sent classic assignment."""
    return frozenset(decode_assignment(assignment)[0]) if assignment else frozenset()


# States --------------------------------------------------------------------------------------


def classic_members_joined(
    count: int, spec: MixedCoordinatorSpec = SPEC
) -> tuple[MixedState, list[str]]:
    """A classic group whose `count` members joined generation 1 (CompletingRebalance)."""
    state = spec.initial_state()
    ids = []
    for _ in range(count):
        outcome = only(send(state, classic_join(""), spec=spec))
        member_id = body(outcome).member_id  # type: ignore[attr-defined]
        ids.append(member_id)
        state = only(send(outcome.state, classic_join(member_id), spec=spec)).state
    now = 3_000
    while state.classic.group("g").state is PREPARING_REBALANCE:  # type: ignore[union-attr]
        state = only(send(state, JoinTimerExpired("g"), now, spec=spec)).state
        now += 3_000
    return state, ids


def classic_group(spec: MixedCoordinatorSpec = SPEC) -> MixedState:
    """A Stable classic group: member c (id 'consumer-0') holds every partition at generation 1."""
    state, (member_id,) = classic_members_joined(1, spec)
    sync = classic_sync(member_id, 1, {member_id: ALL})
    return only(send(state, sync, 3_000, spec=spec)).state


C = "consumer-0"


def upgraded(spec: MixedCoordinatorSpec = SPEC) -> MixedState:
    """classic_group upgraded by consumer member cg1: target c t1-0, cg1 t0-0 t0-1, epoch 2."""
    outcomes = send(classic_group(spec), cg_join("cg1"), 4_000, spec=spec)
    for outcome in outcomes:
        group = outcome.state.consumer.group("g")
        if group is not None and group.target_of(C) == tps("t1-0"):
            return outcome.state
    raise AssertionError("no outcome with that target")


def classic_rejoined(spec: MixedCoordinatorSpec = SPEC) -> MixedState:
    """upgraded, then c rejoined reporting all three: revoking t0-0 t0-1 at epoch 1."""
    return only(send(upgraded(spec), classic_join(C, ALL), 4_100, spec=spec)).state


def converged(spec: MixedCoordinatorSpec = SPEC) -> MixedState:
    """c revoked, rejoined at epoch 2 with t1-0; cg1 took t0-0 t0-1; both Stable at epoch 2."""
    state = only(send(classic_rejoined(spec), classic_sync(C, 1), 4_200, spec=spec)).state
    state = only(send(state, classic_join(C, ("t1-0",)), 4_300, spec=spec)).state
    state = only(send(state, classic_sync(C, 2), 4_400, spec=spec)).state
    beat = ConsumerGroupHeartbeatRequest("g", "cg1", 2, topic_partitions=())
    return only(send(state, beat, 4_500, spec=spec)).state
