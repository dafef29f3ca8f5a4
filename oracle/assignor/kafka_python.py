"""kafka-python's four partition assignors, run through `CallableAssignor`.

kafka-python (`pip install kafka-python`) is imported lazily, only when these adapters are built,
so the rest of groupspec works without it.

What kafka-python's leader sees, and how the adapters reproduce it:

- The cluster: `assign(cluster, members)` calls `cluster.partitions_for_topic(topic)` (a set of
  partition numbers, None for an unknown topic) and, in the sticky family, `cluster.topics()`.
  `ClusterSnapshot` offers exactly these over the group's metadata snapshot.
- The members: objects with `member_id`, `group_instance_id` and `metadata`, a *decoded*
  `ConsumerProtocolSubscription`. The adapters build each member's subscription as a kafka-python
  consumer would send it — the assignor class's subscription version (v0 for range, roundrobin
  and sticky; v1 for cooperative-sticky), so fields that version lacks are lost on the way (a v1
  subscription carries no generation) — encode it to bytes and decode it, like the leader does.
- Per-member state: `StickyPartitionAssignor` (and `CooperativeStickyAssignor`, its subclass)
  keep `member_assignment` and `generation`, set by `on_assignment` after every SyncGroup, and put
  them in the next subscription (sticky: as `StickyAssignorUserData` in user data; cooperative:
  as owned partitions). Every simulated member has its own instance: `subscription_user_data`
  builds the member's instance from exactly that state — a fresh instance for a member that never
  received an assignment (owned nothing, generation -1), otherwise one primed with
  `on_assignment(owned, generation)` — and returns the user data its `metadata()` encodes. The
  leader's instance is a fresh one per `assign`, because kafka-python's `assign` reads no state.
- Member order: members are passed in member-id order (the order of `GroupSubscription`). The
  coordinator's JoinGroup response order is not specified, and kafka-python's range and
  roundrobin depend on it (see the findings in tests/test_third_party_assignors.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from groupspec.spec.assignment import DEFAULT_GENERATION, RebalanceProtocol

from .adapter import (
    CallableAssignor,
    PlainAssignment,
    PlainMember,
    PlainMembers,
    PlainPartitionCounts,
)
from .client_shims import (
    ClientClasses,
    ClusterSnapshot,
    client_available,
    import_client_module,
    partitions_by_topic,
)

KAFKA_PYTHON_PREFIX = "kafka-python:"

# protocol name → (module, class) inside kafka-python.
_CLASSES: dict[str, tuple[str, str]] = {
    "range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
    "cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky",
        "CooperativeStickyAssignor",
    ),
}
KAFKA_PYTHON_PROTOCOLS: tuple[str, ...] = tuple(_CLASSES)


class KafkaPythonMissingError(ImportError):
    """kafka-python is not installed, so its assignors cannot be run."""


def _import(module: str) -> ModuleType:
    return import_client_module(module, KafkaPythonMissingError, "kafka-python")


def kafka_python_available() -> bool:
    """Whether kafka-python can be imported."""
    return client_available(
        "kafka.coordinator.assignors.abstract", KafkaPythonMissingError, "kafka-python"
    )


@dataclass
class _JoinedMember:
    """The part of kafka-python's JoinGroup response member its assignors read."""

    member_id: str
    group_instance_id: str | None
    metadata: Any  # a decoded kafka-python ConsumerProtocolSubscription


def _load(protocol: str) -> ClientClasses:
    module, class_name = _CLASSES[protocol]
    metadata = _import("kafka.protocol.consumer.metadata")
    return ClientClasses(
        assignor_class=getattr(_import(module), class_name),
        subscription_class=metadata.ConsumerProtocolSubscription,
        assignment_class=metadata.ConsumerProtocolAssignment,
    )


def _member_instance(kp: ClientClasses, owned: list[tuple[str, int]], generation: int) -> Any:
    """The member's own assignor instance, in the state kafka-python's consumer leaves it."""
    instance = kp.assignor_class()
    # A consumer that never completed a SyncGroup never called on_assignment.
    if owned or generation != DEFAULT_GENERATION:
        instance.on_assignment(kp.assignment_class(0, partitions_by_topic(owned), b""), generation)
    return instance


def _user_data_function(kp: ClientClasses) -> Callable[[list[tuple[str, int]], int], bytes | None]:
    def user_data(owned: list[tuple[str, int]], generation: int) -> bytes | None:
        metadata = _member_instance(kp, owned, generation).metadata(set())
        # Decode the member's encoded subscription to get user data as the leader sees it.
        data = kp.subscription_class.decode(metadata.encode()).user_data
        return data or None

    return user_data


def _wire_subscription(kp: ClientClasses, member: PlainMember) -> Any:
    """The member's subscription as kafka-python would encode it, decoded as the leader does."""
    version = kp.assignor_class.version
    fields: dict[str, Any] = {
        "version": version,
        "topics": list(member["topics"]),
        "user_data": member["user_data"] or b"",
    }
    if version >= 1:
        fields["owned_partitions"] = [
            kp.subscription_class.TopicPartition(topic=topic, partitions=numbers)
            for topic, numbers in partitions_by_topic(member["owned_partitions"])
        ]
    if version >= 2:
        fields["generation_id"] = member["generation"]
    return kp.subscription_class.decode(kp.subscription_class(**fields).encode())


def _assign_function(
    kp: ClientClasses,
) -> Callable[[PlainMembers, PlainPartitionCounts], PlainAssignment]:
    def assign(members: PlainMembers, partition_counts: PlainPartitionCounts) -> PlainAssignment:
        joined = [
            _JoinedMember(member_id, member["instance_id"], _wire_subscription(kp, member))
            for member_id, member in members.items()
        ]
        result = kp.assignor_class().assign(ClusterSnapshot(partition_counts), joined)
        return {
            member_id: [(tp.topic, tp.partition) for tp in assignment.partitions()]
            for member_id, assignment in result.items()
        }

    return assign


def kafka_python_assignor(protocol: str) -> CallableAssignor:
    """kafka-python's assignor for `protocol` ("range", "roundrobin", "sticky", "cooperative-sticky")."""
    if protocol not in _CLASSES:
        raise ValueError(
            f"kafka-python has no assignor {protocol!r}; known: {', '.join(KAFKA_PYTHON_PROTOCOLS)}"
        )
    kp = _load(protocol)
    supported = tuple(
        RebalanceProtocol(int(mode)) for mode in kp.assignor_class().supported_protocols()
    )
    return CallableAssignor(
        name=KAFKA_PYTHON_PREFIX + protocol,
        function=_assign_function(kp),
        supported_protocols=supported,
        user_data=_user_data_function(kp),
        protocol_name=protocol,
    )


def kafka_python_assignors() -> tuple[CallableAssignor, ...]:
    """All four kafka-python assignors; raises `KafkaPythonMissingError` without kafka-python."""
    return tuple(kafka_python_assignor(protocol) for protocol in KAFKA_PYTHON_PROTOCOLS)
