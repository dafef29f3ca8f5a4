"""Shared helpers of the KIP-848 tests: build heartbeats, send them, read groups."""

from __future__ import annotations

from hypothesis import strategies as st

from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    Outcome,
    RequestArrived,
)
from groupspec.spec.kip848.events import ConsumerGroupInput
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupTopicPartitions,
)
from groupspec.vocabulary.requests import RequestRef, TopicPartition

# Recompute the target at every epoch bump (Kafka 4.0-4.2's behaviour) unless a test says not.
CONFIG = ConsumerGroupConfig(assignment_interval_ms=0)
SPEC = ConsumerGroupCoordinatorSpec(CONFIG)
REF = RequestRef("client", 0)
TOPIC_IDS = {topic.name: topic.topic_id for topic in CONFIG.topics}

# The random runs' cast (the stateful spec test and the impl-against-spec test): dynamic members,
# static members (two sharing an instance id), partitions, subscriptions (one naming a topic the
# cluster lacks) and assignors (one the broker does not have).
GROUP = "g"
DYNAMIC = ("a", "b", "c")
STATIC = (("s1", "i1"), ("s2", "i1"), ("s3", "i2"))
PARTITIONS = ("t0-0", "t0-1", "t1-0")
TOPICS = st.sampled_from([(), ("t0",), ("t1",), ("t0", "t1"), ("t0", "t9")])
ASSIGNORS = st.sampled_from([None, None, None, "uniform", "range", "sticky"])


def owned(*partitions: str) -> tuple[ConsumerGroupTopicPartitions, ...]:
    """Owned partitions from names such as 't0-1'."""
    by_topic: dict[str, list[int]] = {}
    for name in partitions:
        topic, number = name.rsplit("-", 1)
        by_topic.setdefault(topic, []).append(int(number))
    return tuple(
        ConsumerGroupTopicPartitions(TOPIC_IDS.get(topic, f"{topic}-id"), tuple(sorted(numbers)))
        for topic, numbers in sorted(by_topic.items())
    )


def tps(*partitions: str) -> frozenset[TopicPartition]:
    """Partitions from names such as 't0-1'."""
    found = set()
    for name in partitions:
        topic, number = name.rsplit("-", 1)
        found.add(TopicPartition(topic, int(number)))
    return frozenset(found)


def join(
    member_id: str,
    topics: tuple[str, ...] = ("t0", "t1"),
    *,
    instance_id: str | None = None,
    api_version: int = 1,
    server_assignor: str | None = None,
    group_id: str = "g",
) -> ConsumerGroupHeartbeatRequest:
    """A full join (epoch 0) subscribing to `topics`."""
    return ConsumerGroupHeartbeatRequest(
        group_id,
        member_id,
        0,
        instance_id=instance_id,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=topics,
        server_assignor=server_assignor,
        topic_partitions=(),
        api_version=api_version,
    )


def beat(
    member_id: str,
    epoch: int,
    *partitions: str,
    instance_id: str | None = None,
    topics: tuple[str, ...] | None = None,
    group_id: str = "g",
) -> ConsumerGroupHeartbeatRequest:
    """A heartbeat at `epoch` reporting `partitions` as owned."""
    return ConsumerGroupHeartbeatRequest(
        group_id,
        member_id,
        epoch,
        instance_id=instance_id,
        subscribed_topic_names=topics,
        topic_partitions=owned(*partitions),
    )


def send(
    state: ConsumerGroupsState,
    item: ConsumerGroupHeartbeatRequest | ConsumerGroupDescribeRequest | ConsumerGroupInput,
    now_ms: int = 0,
    spec: ConsumerGroupCoordinatorSpec = SPEC,
) -> tuple[Outcome, ...]:
    """Every outcome of a request (or a timer event) in `state` at `now_ms`."""
    if isinstance(item, (ConsumerGroupHeartbeatRequest, ConsumerGroupDescribeRequest)):
        return spec.step(state, RequestArrived(REF, item), now_ms)
    return spec.step(state, item, now_ms)


def only(outcomes: tuple[Outcome, ...]) -> Outcome:
    """The one outcome of a step that takes no choice."""
    assert len(outcomes) == 1, [o.choices for o in outcomes]
    return outcomes[0]


def answer(outcome: Outcome) -> ConsumerGroupHeartbeatResponse:
    """The heartbeat response of a step."""
    (reply,) = outcome.responses
    assert isinstance(reply.body, ConsumerGroupHeartbeatResponse)
    return reply.body


def first(outcomes: tuple[Outcome, ...], **assigned: frozenset[TopicPartition]) -> Outcome:
    """The outcome whose target gives each named member exactly the given partitions."""
    for outcome in outcomes:
        (group,) = outcome.state.iter_groups()
        if all(group.target_of(member) == parts for member, parts in assigned.items()):
            return outcome
    raise AssertionError(f"no outcome with target {assigned}")
