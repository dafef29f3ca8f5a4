"""Who leads the `__consumer_offsets` partition of a cluster, and moving that leadership.

A group's coordinator is the broker leading its offsets partition. Moving the leadership
elsewhere is a coordinator failover as the specification models it: the old leader becomes a
follower and unloads the partition's groups (`Unload`), the new leader replays the partition's
log (`StartLoading`, `FinishLoading`). It is done the way an operator would, with two admin
requests any broker forwards to the controller: AlterPartitionReassignments puts the target
first in the replica list (the same replicas, so nothing is copied), and ElectLeaders makes the
first replica, now the preferred one, the leader. Both are asked through `RequestConnection`,
at versions both Kafka lines answer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from kafka.protocol.admin.topics import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

from groupspec.wire.request_connection import RequestConnection

OFFSETS_TOPIC = "__consumer_offsets"
PREFERRED = 0  # ElectLeaders' election type
LATEST = -1  # ListOffsets' timestamp for the high watermark (read uncommitted)
ELECTION_NOT_NEEDED = 84
NONE = 0
REQUEST_TIMEOUT_MS = 30_000
POLL_S = 0.05


class LeadershipError(Exception):
    """The offsets partition could not be read or its leadership could not be moved."""


@dataclass(frozen=True)
class PartitionLeadership:
    """One offsets partition as a broker's metadata shows it."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    in_sync: tuple[int, ...]


async def offsets_partitions(connection: RequestConnection) -> tuple[PartitionLeadership, ...]:
    """The offsets topic's partitions as the broker behind `connection` knows them (empty while
    the topic does not exist yet)."""
    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=OFFSETS_TOPIC)],
        allow_auto_topic_creation=False,
    )
    response = await connection.call(request, MetadataResponse, 4)
    found = []
    for topic in response.topics:
        if topic.name != OFFSETS_TOPIC or topic.error_code != NONE:
            continue
        for partition in topic.partitions:
            found.append(
                PartitionLeadership(
                    partition.partition_index,
                    partition.leader_id,
                    tuple(partition.replica_nodes),
                    tuple(partition.isr_nodes),
                )
            )
    return tuple(sorted(found, key=lambda p: p.partition))


async def prefer(
    connection: RequestConnection, partition: int, to_node: int, deadline: float
) -> PartitionLeadership:
    """Put `to_node` first in the replica list of offsets partition `partition` (the same
    replicas: nothing is copied, the leader stays) and return the partition once the broker
    behind `connection` sees the new order; LeadershipError if `to_node` holds no in-sync
    replica, the request fails, or `deadline` (monotonic) passes."""
    current = await _partition(connection, partition)
    if current.replicas[0] == to_node:
        return current
    if to_node not in current.in_sync:
        raise LeadershipError(
            f"node {to_node} is not an in-sync replica of {OFFSETS_TOPIC}-{partition} "
            f"(replicas {list(current.replicas)}, in sync {list(current.in_sync)})"
        )
    order = [to_node, *(node for node in current.replicas if node != to_node)]
    await _reassign(connection, partition, order)
    while True:
        now = await _partition(connection, partition)
        if now.replicas == tuple(order):
            return now
        _check(deadline, f"the replicas of {OFFSETS_TOPIC}-{partition} to become {order}")
        await asyncio.sleep(POLL_S)


async def elect_preferred(
    connection: RequestConnection, partition: int, deadline: float
) -> PartitionLeadership:
    """Elect the first replica of offsets partition `partition` its leader and return once the
    broker behind `connection` sees it lead (the new leader loads the partition from then on);
    LeadershipError if the request fails or `deadline` (monotonic) passes."""
    preferred = (await _partition(connection, partition)).replicas[0]
    await _elect(connection, partition)
    while True:
        now = await _partition(connection, partition)
        if now.leader == preferred:
            return now
        _check(deadline, f"node {preferred} to lead {OFFSETS_TOPIC}-{partition}")
        await asyncio.sleep(POLL_S)


async def high_watermark(connection: RequestConnection, partition: int) -> int | None:
    """Offsets partition `partition`'s high watermark (ListOffsets, latest) as the broker behind
    `connection` gives it; None if that broker does not lead the partition (yet)."""
    topic = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            topic(
                name=OFFSETS_TOPIC,
                partitions=[
                    topic.ListOffsetsPartition(partition_index=partition, timestamp=LATEST)
                ],
            )
        ],
    )
    response = await connection.call(request, ListOffsetsResponse, 1)
    for answered in response.topics:
        for found in answered.partitions:
            if found.partition_index == partition and found.error_code == NONE:
                return int(found.offset)
    return None


async def _partition(connection: RequestConnection, partition: int) -> PartitionLeadership:
    for found in await offsets_partitions(connection):
        if found.partition == partition:
            return found
    raise LeadershipError(f"{connection.address} knows no partition {OFFSETS_TOPIC}-{partition}")


async def _reassign(connection: RequestConnection, partition: int, replicas: list[int]) -> None:
    topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    request = AlterPartitionReassignmentsRequest(
        timeout_ms=REQUEST_TIMEOUT_MS,
        topics=[
            topic(
                name=OFFSETS_TOPIC,
                partitions=[
                    topic.ReassignablePartition(partition_index=partition, replicas=replicas)
                ],
            )
        ],
    )
    response = await connection.call(request, AlterPartitionReassignmentsResponse, 0)
    errors = [response.error_code] + [
        p.error_code for t in response.responses for p in t.partitions
    ]
    if any(errors):
        raise LeadershipError(
            f"AlterPartitionReassignments of {OFFSETS_TOPIC}-{partition} to {replicas} "
            f"answered errors {errors}"
        )


async def _elect(connection: RequestConnection, partition: int) -> None:
    request = ElectLeadersRequest(
        election_type=PREFERRED,
        topic_partitions=[
            ElectLeadersRequest.TopicPartitions(topic=OFFSETS_TOPIC, partitions=[partition])
        ],
        timeout_ms=REQUEST_TIMEOUT_MS,
    )
    response = await connection.call(request, ElectLeadersResponse, 1)
    errors = [response.error_code] + [
        p.error_code
        for result in response.replica_election_results
        for p in result.partition_result
        if p.error_code != ELECTION_NOT_NEEDED
    ]
    if any(errors):
        raise LeadershipError(
            f"ElectLeaders (preferred) of {OFFSETS_TOPIC}-{partition} answered errors {errors}"
        )


def _check(deadline: float, waiting_for: str) -> None:
    if time.monotonic() > deadline:
        raise LeadershipError(f"timed out waiting for {waiting_for}")
