"""What Python Kafka clients' assignors read from their surroundings, offered over plain data.

kafka-python's and aiokafka's assignors both ask a `ClusterMetadata` for `topics()` and
`partitions_for_topic(topic)`, and both carry assignments as (topic, [partition, ...]) lists.
The adapters (`kafka_python.py`, `aiokafka_assignors.py`) share these pieces, and the lazy import
that turns a missing client into one clear error.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .adapter import PlainPartitionCounts


def import_client_module(module: str, missing: type[ImportError], distribution: str) -> ModuleType:
    """Import `module` of an optional client; raise `missing` naming `pip install distribution`."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise missing(
            f"{distribution} is not installed; install it to compare its assignors: "
            f"pip install {distribution}"
        ) from error


def client_available(module: str, missing: type[ImportError], distribution: str) -> bool:
    """Whether `module` of an optional client can be imported."""
    try:
        import_client_module(module, missing, distribution)
    except missing:
        return False
    return True


@dataclass(frozen=True)
class ClientClasses:
    """The client classes one adapter needs: the assignor and the wire structs it reads and returns."""

    assignor_class: Any
    subscription_class: Any  # what a member sends in JoinGroup
    assignment_class: Any  # what a member receives in SyncGroup


class ClusterSnapshot:
    """The part of a client's `ClusterMetadata` its assignors read, over a metadata snapshot."""

    def __init__(self, partition_counts: PlainPartitionCounts) -> None:
        self._counts = dict(partition_counts)

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        """Every topic in the snapshot."""
        return set(self._counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        """The topic's partition numbers, None when the topic is not in the snapshot."""
        count = self._counts.get(topic)
        return None if count is None else set(range(count))


def partitions_by_topic(partitions: list[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """(topic, partition) pairs grouped as the clients' assignment structs carry them, sorted."""
    grouped: dict[str, list[int]] = {}
    for topic, partition in partitions:
        grouped.setdefault(topic, []).append(partition)
    return [(topic, sorted(numbers)) for topic, numbers in sorted(grouped.items())]
