"""Any Python callable that maps subscriptions to assignments, wrapped as an `Assignor`.

Third-party assignors (kafka-python's, a user's own) rarely speak our data model. This adapter
gives them a plain-data interface so they run through the same property checks and stickiness
measurements as our assignors.

Plain-data shapes (only builtin types, so any library can produce and consume them):

`PlainMembers` — what the callable is given, one entry per member, in member-id order::

    {
        "member-1": {
            "topics": ["orders", "payments"],          # subscribed topics, sorted
            "owned_partitions": [("orders", 0), ...],   # ConsumerProtocolSubscription v1+
            "generation": 3,                            # v2+ GenerationId, -1 when unknown
            "instance_id": "instance-a" or None,        # group.instance.id (static members)
            "rack": "rack-1" or None,                   # v3+ RackId
            "user_data": b"..." or None,                # the assignor's subscription user data
        },
        ...
    }

`PlainPartitionCounts` — the leader's metadata snapshot: `{"orders": 12, "payments": 6}`.

`PlainAssignment` — what the callable returns: member id → (topic, partition) pairs::

    {"member-1": [("orders", 0), ("orders", 1)], "member-2": []}

The result must be a mapping whose keys are member ids of the group and whose values are
iterables of `(str, int)` pairs (lists or tuples). A member missing from the result gets an empty
assignment, as the coordinator gives a member the leader left out of SyncGroup. Anything else is
malformed and raises `AssignorOutputError` naming the member and the entry. Well-formed but wrong
results (a partition that does not exist, given twice, or to a member not subscribed to its
topic) are deliberately NOT rejected here: they are property violations, which the property
checks report as findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypedDict

from groupspec.spec.assignment import GroupAssignment, GroupSubscription, RebalanceProtocol
from groupspec.spec.assignors.base import Assignor
from groupspec.vocabulary.requests import TopicPartition


class PlainMember(TypedDict):
    """One member's subscription as plain data (see the module docstring)."""

    topics: list[str]
    owned_partitions: list[tuple[str, int]]
    generation: int
    instance_id: str | None
    rack: str | None
    user_data: bytes | None


PlainMembers = dict[str, PlainMember]
PlainPartitionCounts = dict[str, int]
PlainAssignment = Mapping[str, Iterable[tuple[str, int]]]
AssignFunction = Callable[[PlainMembers, PlainPartitionCounts], PlainAssignment]
# (owned partitions, generation) → the user data a member puts in its subscription.
UserDataFunction = Callable[[list[tuple[str, int]], int], bytes | None]


class AssignorOutputError(ValueError):
    """A wrapped assignor returned something that is not a `PlainAssignment`."""


def plain_members(group: GroupSubscription) -> PlainMembers:
    """The group's subscriptions as `PlainMembers`, in member-id order."""
    return {
        member.member_id: PlainMember(
            topics=list(member.subscription.topics),
            owned_partitions=[
                (tp.topic, tp.partition) for tp in member.subscription.owned_partitions
            ],
            generation=member.subscription.generation,
            instance_id=member.group_instance_id,
            rack=member.subscription.rack,
            user_data=member.subscription.user_data,
        )
        for member in group.members
    }


def plain_partition_counts(group: GroupSubscription) -> PlainPartitionCounts:
    """The group's metadata snapshot as `PlainPartitionCounts`."""
    return dict(group.cluster.partitions_per_topic)


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _pair(assignor: str, member_id: str, index: int, entry: object) -> TopicPartition:
    where = f"assignor {assignor!r}: member {member_id!r}, entry {index} ({_describe(entry)})"
    if not isinstance(entry, tuple | list) or len(entry) != 2:
        raise AssignorOutputError(f"{where}: expected a (topic, partition) pair")
    topic, partition = entry
    if not isinstance(topic, str):
        raise AssignorOutputError(f"{where}: topic must be a str, got {type(topic).__name__}")
    # bool is an int subclass; True as a partition number is garbage, not partition 1.
    if isinstance(partition, bool) or not isinstance(partition, int):
        raise AssignorOutputError(
            f"{where}: partition of topic {topic!r} must be an int, got {type(partition).__name__}"
        )
    return TopicPartition(topic, partition)


def to_group_assignment(assignor: str, group: GroupSubscription, result: object) -> GroupAssignment:
    """Validate a `PlainAssignment` for `group` and convert it; raises `AssignorOutputError`."""
    if not isinstance(result, Mapping):
        raise AssignorOutputError(
            f"assignor {assignor!r}: expected a mapping of member id to partitions, "
            f"got {type(result).__name__}"
        )
    known = set(group.member_ids)
    assignments: dict[str, list[TopicPartition]] = {member_id: [] for member_id in known}
    for member_id, partitions in result.items():
        if not isinstance(member_id, str):
            raise AssignorOutputError(
                f"assignor {assignor!r}: member id {_describe(member_id)} is not a str"
            )
        if member_id not in known:
            raise AssignorOutputError(
                f"assignor {assignor!r}: assigned partitions to unknown member {member_id!r} "
                f"(group members: {', '.join(sorted(known)) or 'none'})"
            )
        # A str or bytes is iterable but is never a list of pairs.
        if isinstance(partitions, str | bytes | Mapping) or not isinstance(partitions, Iterable):
            raise AssignorOutputError(
                f"assignor {assignor!r}: member {member_id!r}: expected a list of "
                f"(topic, partition) pairs, got {type(partitions).__name__}"
            )
        assignments[member_id] = [
            _pair(assignor, member_id, index, entry) for index, entry in enumerate(partitions)
        ]
    return GroupAssignment.of(assignments)


@dataclass(frozen=True)
class CallableAssignor:
    """An `Assignor` backed by a plain-data function (see the module docstring for the shapes).

    `name` identifies the assignor in reports; `protocol_name` is the protocol members offer in
    JoinGroup ("range", "sticky", ...), which selects the properties it is held to (defaults to
    `name`). `user_data`, when given, computes the subscription user data from the member's
    owned partitions and generation.
    """

    name: str
    function: AssignFunction
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)
    user_data: UserDataFunction | None = None
    protocol_name: str = ""

    def __post_init__(self) -> None:
        if not self.supported_protocols:
            raise ValueError(f"assignor {self.name!r} must support at least one protocol")
        if not self.protocol_name:
            object.__setattr__(self, "protocol_name", self.name)

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """The user data the wrapped `user_data` function computes (None without one)."""
        if self.user_data is None:
            return None
        data = self.user_data([(tp.topic, tp.partition) for tp in owned], generation)
        if data is not None and not isinstance(data, bytes):
            raise AssignorOutputError(
                f"assignor {self.name!r}: user data must be bytes or None, got {type(data).__name__}"
            )
        return data

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """Run the wrapped function on `group` as plain data and validate what it returns."""
        result = self.function(plain_members(group), plain_partition_counts(group))
        return to_group_assignment(self.name, group, result)


def protocol_name_of(assignor: Assignor) -> str:
    """The JoinGroup protocol name an assignor is offered under (adapters may differ from `name`)."""
    protocol = getattr(assignor, "protocol_name", None)
    return protocol if isinstance(protocol, str) and protocol else assignor.name
