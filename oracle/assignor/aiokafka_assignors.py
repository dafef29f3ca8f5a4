"""aiokafka's three partition assignors, run through `CallableAssignor`.

aiokafka (`pip install aiokafka`) is imported lazily, only when these adapters are built, so the
rest of groupspec works without it.

What aiokafka's leader sees, and how the adapters reproduce it (aiokafka 0.14,
`consumer/group_coordinator.py` and `coordinator/assignors/`):

- The protocols: range, roundrobin and sticky, all EAGER (aiokafka has no cooperative
  rebalancing). Every subscription is `ConsumerProtocolMemberMetadata` version 0: topics and
  user data, no owned partitions, no generation.
- The members: `_perform_assignment` decodes each member's metadata and passes
  `{member_id: metadata}` in JoinGroup order; it drops the members' `group.instance.id`, so
  aiokafka's assignors never see who is static. The adapters pass the members in member-id
  order (the order of `GroupSubscription`), each subscription encoded and decoded as on the wire.
- The cluster: `ClusterSnapshot` offers the `topics()` and `partitions_for_topic()` they read.
- Sticky user data: `StickyPartitionAssignor` keeps its state in CLASS attributes
  (`member_assignment`, `generation`), set by `on_assignment` after every SyncGroup and read by
  `metadata()`. The consumer calls `on_assignment` but never `on_generation_assignment`, so the
  generation in the user data stays -1 forever. The adapter rebuilds what one member sends from
  (owned partitions, generation): a private subclass per member, so no state leaks between
  members; `on_assignment` with what the member owns, unless it never completed a SyncGroup
  (owned nothing, generation -1); and `metadata()` — hence generation -1, as aiokafka sends it.
  The leader's `assign` also runs on a private subclass, because it records its partition
  movements on the class.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from groupspec.spec.assignment import DEFAULT_GENERATION, RebalanceProtocol

from .adapter import CallableAssignor, PlainAssignment, PlainMembers, PlainPartitionCounts
from .client_shims import (
    ClientClasses,
    ClusterSnapshot,
    client_available,
    import_client_module,
    partitions_by_topic,
)

AIOKAFKA_PREFIX = "aiokafka:"

# protocol name → (module, class) inside aiokafka.
_CLASSES: dict[str, tuple[str, str]] = {
    "range": ("aiokafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("aiokafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("aiokafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
}
AIOKAFKA_PROTOCOLS: tuple[str, ...] = tuple(_CLASSES)


class AiokafkaMissingError(ImportError):
    """aiokafka is not installed, so its assignors cannot be run."""


def _import(module: str) -> ModuleType:
    return import_client_module(module, AiokafkaMissingError, "aiokafka")


def aiokafka_available() -> bool:
    """Whether aiokafka can be imported."""
    return client_available(
        "aiokafka.coordinator.assignors.abstract", AiokafkaMissingError, "aiokafka"
    )


def _load(protocol: str) -> ClientClasses:
    module, class_name = _CLASSES[protocol]
    structs = _import("aiokafka.coordinator.protocol")
    return ClientClasses(
        assignor_class=getattr(_import(module), class_name),
        subscription_class=structs.ConsumerProtocolMemberMetadata,
        assignment_class=structs.ConsumerProtocolMemberAssignment,
    )


def _private(assignor_class: Any) -> Any:
    """A subclass of its own: class-level state set on it stays off the real class."""
    return type(assignor_class.__name__, (assignor_class,), {})


def _user_data_function(ak: ClientClasses) -> Callable[[list[tuple[str, int]], int], bytes | None]:
    def user_data(owned: list[tuple[str, int]], generation: int) -> bytes | None:
        member = _private(ak.assignor_class)
        # A consumer that never completed a SyncGroup never called on_assignment. The
        # generation goes nowhere: aiokafka never calls on_generation_assignment.
        if owned or generation != DEFAULT_GENERATION:
            member.on_assignment(ak.assignment_class(0, partitions_by_topic(owned), b""))
        metadata = member.metadata([])
        # Decode the member's encoded metadata to get user data as the leader sees it.
        data = ak.subscription_class.decode(metadata.encode()).user_data
        return data or None

    return user_data


def _assign_function(
    ak: ClientClasses,
) -> Callable[[PlainMembers, PlainPartitionCounts], PlainAssignment]:
    def assign(members: PlainMembers, partition_counts: PlainPartitionCounts) -> PlainAssignment:
        decoded = {
            member_id: ak.subscription_class.decode(
                ak.subscription_class(
                    0, list(member["topics"]), member["user_data"] or b""
                ).encode()
            )
            for member_id, member in members.items()
        }
        leader = _private(ak.assignor_class)
        result = leader.assign(ClusterSnapshot(partition_counts), decoded)
        return {
            member_id: [(tp.topic, tp.partition) for tp in assignment.partitions()]
            for member_id, assignment in result.items()
        }

    return assign


def aiokafka_assignor(protocol: str) -> CallableAssignor:
    """aiokafka's assignor for `protocol` ("range", "roundrobin", "sticky")."""
    if protocol not in _CLASSES:
        raise ValueError(
            f"aiokafka has no assignor {protocol!r}; known: {', '.join(AIOKAFKA_PROTOCOLS)}"
        )
    ak = _load(protocol)
    return CallableAssignor(
        name=AIOKAFKA_PREFIX + protocol,
        function=_assign_function(ak),
        supported_protocols=(RebalanceProtocol.EAGER,),
        user_data=_user_data_function(ak),
        protocol_name=protocol,
    )


def aiokafka_assignors() -> tuple[CallableAssignor, ...]:
    """All three aiokafka assignors; raises `AiokafkaMissingError` without aiokafka."""
    return tuple(aiokafka_assignor(protocol) for protocol in AIOKAFKA_PROTOCOLS)
