"""A cluster of several Apache Kafka brokers on loopback, whose group coordinator can be moved
from one broker to another (docs/kafka.md, "A cluster").

Node 1 is the KRaft controller and a broker; nodes 2..N are brokers only (a static one-voter
quorum, as the single broker has). Every broker holds a replica of `__consumer_offsets` (one
partition, replication factor N), so its leadership, and with it every group's coordinator,
can move to any broker without copying data (`move_coordinator`, record/kafka/leadership.py).
Brokers replicate over their own listener, so a recorder in front of a broker's client port
(`advertised_ports`) sees client traffic only.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

from groupspec.wire.address import Address, free_port
from groupspec.wire.request_connection import RequestConnection

from .broker import (
    HOST,
    READY_TIMEOUT_S,
    BrokerStartError,
    ClusterNode,
    KafkaBroker,
    cluster_id,
    first_error_suffix,
)
from .leadership import (
    LeadershipError,
    PartitionLeadership,
    elect_preferred,
    high_watermark,
    offsets_partitions,
    prefer,
)
from .readiness import READINESS_GROUP, NotReadyError, connect_answered, until_no_error
from .settings import KAFKA_4X, group_settings, header_settings

START_ATTEMPTS = 3
MOVE_TIMEOUT_S = 60.0
POLL_S = 0.1
CLIENT_ID = "groupspec-cluster"
NOT_COORDINATOR = 16


class KafkaCluster:
    """N brokers of one Kafka line (see the module docstring); a context manager."""

    def __init__(
        self,
        line: str = KAFKA_4X,
        brokers: int = 2,
        settings: Mapping[str, Any] | None = None,
        advertised_ports: Sequence[int | None] | None = None,
    ) -> None:
        """`brokers` brokers (at least 2) of Kafka `line` with the group settings `settings`
        overrides (header names; ValueError as KafkaBroker raises it); broker i tells clients
        to connect to `advertised_ports[i]` when it is given (a recorder's port), else to its
        own port. The offsets topic always has one partition. Nothing starts before `start`."""
        if brokers < 2:
            raise ValueError(f"a cluster has at least 2 brokers, got {brokers}")
        ports = list(advertised_ports or [None] * brokers)
        if len(ports) != brokers:
            raise ValueError(f"{len(ports)} advertised ports for {brokers} brokers")
        self.line = line
        self.size = brokers
        self.settings = group_settings({**(settings or {}), "offsets_topic_num_partitions": 1})
        self._advertised = ports
        self.nodes: list[KafkaBroker] = []
        self.data_dir: Path | None = None
        self.ready_s: float | None = None

    @property
    def release(self) -> str:
        """The Kafka release, `4.4.0`."""
        return KafkaBroker(self.line).release

    @property
    def title(self) -> str:
        """`Apache Kafka 4.4.0 (KRaft, 2 brokers)`."""
        return f"Apache Kafka {self.release} (KRaft, {self.size} brokers)"

    def header_settings(self) -> dict[str, Any]:
        """The trace header's coordinator settings of every broker of the cluster (the same for
        all, so their recorders' traces merge; `broker_id` is node 1's, and the oracle does not
        compare node ids)."""
        return header_settings(self.line, self.settings)

    def node(self, node_id: int) -> KafkaBroker:
        """The broker with node id `node_id` (1..N)."""
        return self.nodes[node_id - 1]

    def address(self, node_id: int) -> Address:
        """Broker `node_id`'s own client address (not its recorder's)."""
        return self.node(node_id).address

    def start(self, say: Callable[[str], None] | None = None) -> None:
        """Start every broker and return once the offsets partition has all N replicas in sync
        and its leader serves groups; BrokerStartError (naming a log) if that does not happen."""
        if self.nodes:
            raise RuntimeError("the cluster is already running")
        self.data_dir = Path(tempfile.mkdtemp(prefix="groupspec-kafka-cluster-"))
        started = time.monotonic()
        try:
            for attempt in range(1, START_ATTEMPTS + 1):
                self._launch(say)
                try:
                    asyncio.run(self._await_ready(time.monotonic() + READY_TIMEOUT_S))
                    break
                except BrokerStartError:
                    taken = any(node.port_was_taken() for node in self.nodes)
                    if attempt == START_ATTEMPTS or not taken:
                        raise
                    self._stop_nodes(keep_data=False)
        except BrokerStartError:
            self._stop_nodes(keep_data=True)  # their logs stay: the error names one
            raise
        except BaseException:
            self.stop()
            raise
        self.ready_s = time.monotonic() - started

    def stop(self) -> None:
        """Stop every broker (controlled shutdown) and remove the cluster's data."""
        self._stop_nodes(keep_data=False)
        if self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def __enter__(self) -> KafkaCluster:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    async def leadership(self) -> PartitionLeadership:
        """The offsets partition as node 1 sees it: leader, replicas, in-sync replicas."""
        connection = await RequestConnection.open(self.address(1), CLIENT_ID)
        try:
            (partition,) = await offsets_partitions(connection)
            return partition
        finally:
            connection.close()

    async def move_coordinator(self, to_node: int | None = None) -> int:
        """Move the offsets partition's leadership (so every group's coordinator) to broker
        `to_node` (None: the next one after the current leader), and return its node id once
        the move is complete (`elect`)."""
        target = await self.prefer(to_node)
        await self.elect()
        return target

    async def prefer(self, to_node: int | None = None) -> int:
        """Make broker `to_node` (None: the next one after the current leader) the preferred
        leader of the offsets partition without moving its leadership yet; its node id."""
        current = await self.leadership()
        target = to_node if to_node is not None else current.leader % self.size + 1
        if target == current.leader:
            raise LeadershipError(f"node {target} already leads {current}")
        connection = await RequestConnection.open(self.address(1), CLIENT_ID)
        try:
            await prefer(connection, current.partition, target, time.monotonic() + MOVE_TIMEOUT_S)
        finally:
            connection.close()
        return target

    async def elect(self) -> int:
        """Move the offsets partition's leadership to its preferred broker (`prefer`) and return
        that broker's node id once the move is complete, as the specification's failover is:
        the new leader has loaded the partition and committed (high watermark) everything the
        old one had, and the old one has unloaded its groups. (Kafka does each of these
        asynchronously: an old coordinator serves its groups from memory for a while after it
        lost the partition, and a new one serves reads from its committed state, which lags
        until the old leader fetches from it as a follower.)"""
        deadline = time.monotonic() + MOVE_TIMEOUT_S
        connection = await RequestConnection.open(self.address(1), CLIENT_ID)
        try:
            before = (await offsets_partitions(connection))[0]
            committed = await self._high_watermark(before.leader, before.partition)
            leader = (await elect_preferred(connection, before.partition, deadline)).leader
        finally:
            connection.close()
        await self._await_loaded(leader, deadline)
        target = committed if committed is not None else 0
        while True:
            reached = await self._high_watermark(leader, before.partition)
            if reached is not None and reached >= target:
                break
            self._check_move(deadline, f"node {leader}'s high watermark to reach {target}")
            await asyncio.sleep(POLL_S)
        await self._await_unloaded(before.leader, deadline)
        return leader

    async def _high_watermark(self, node_id: int, partition: int) -> int | None:
        connection = await RequestConnection.open(self.address(node_id), CLIENT_ID)
        try:
            return await high_watermark(connection, partition)
        finally:
            connection.close()

    async def _await_unloaded(self, node_id: int, deadline: float) -> None:
        """Until broker `node_id` answers NOT_COORDINATOR for the groups of the partition."""
        connection = await RequestConnection.open(self.address(node_id), CLIENT_ID)
        try:
            fetch = OffsetFetchRequest(group_id=READINESS_GROUP, topics=None)
            while (await connection.call(fetch, OffsetFetchResponse, 2)).error_code != (
                NOT_COORDINATOR
            ):
                self._check_move(deadline, f"node {node_id} to unload the offsets partition")
                await asyncio.sleep(POLL_S)
        finally:
            connection.close()

    def _check_move(self, deadline: float, waiting_for: str) -> None:
        if time.monotonic() > deadline:
            raise LeadershipError(f"timed out waiting for {waiting_for}")

    def _launch(self, say: Callable[[str], None] | None) -> None:
        assert self.data_dir is not None
        self._stop_nodes(keep_data=False)
        controller_port = free_port()
        voters = f"1@{HOST}:{controller_port}"
        identity = cluster_id()
        self.nodes = []
        for index in range(self.size):
            node_id = index + 1
            node = ClusterNode(
                node_id=node_id,
                controller=node_id == 1,
                voters=voters,
                cluster_id=identity,
                replication=self.size,
                internal_port=free_port(),
                advertised_port=self._advertised[index],
                controller_port=controller_port if node_id == 1 else 0,
            )
            data_dir = self.data_dir / f"node-{node_id}"
            shutil.rmtree(data_dir, ignore_errors=True)  # an earlier attempt's other cluster id
            broker = KafkaBroker(
                self.line,
                port=free_port(),
                data_dir=data_dir,
                settings=self.settings,
                node=node,
            )
            self.nodes.append(broker)
        for broker in self.nodes:
            broker.launch(say)

    async def _await_ready(self, deadline: float) -> None:
        """Every broker answers; the offsets topic exists with every replica in sync; its
        leader has loaded it."""
        for broker in self.nodes:
            connection = await self._connect(broker, deadline)
            connection.close()
        first = await self._connect(self.nodes[0], deadline)
        try:
            find = FindCoordinatorRequest(key=READINESS_GROUP, key_type=0)
            await self._until(
                lambda: first.call(find, FindCoordinatorResponse, 1),
                f"FindCoordinator for group {READINESS_GROUP}",
                deadline,
            )
            while True:
                partitions = await offsets_partitions(first)
                if partitions and all(len(p.in_sync) == self.size for p in partitions):
                    break
                self._check(deadline, f"every replica of the offsets topic in sync: {partitions}")
                await asyncio.sleep(POLL_S)
        finally:
            first.close()
        await self._await_loaded(partitions[0].leader, deadline)

    async def _await_loaded(self, node_id: int, deadline: float) -> None:
        connection = await self._connect(self.node(node_id), deadline)
        try:
            fetch = OffsetFetchRequest(group_id=READINESS_GROUP, topics=None)
            await self._until(
                lambda: connection.call(fetch, OffsetFetchResponse, 2),
                f"OffsetFetch for group {READINESS_GROUP} at node {node_id}",
                deadline,
            )
        finally:
            connection.close()

    async def _connect(self, broker: KafkaBroker, deadline: float) -> RequestConnection:
        try:
            return await connect_answered(broker.address, broker.running, deadline)
        except NotReadyError as error:
            raise self._start_error(broker, error) from None

    async def _until(self, call: Callable[[], Any], what: str, deadline: float) -> None:
        try:
            await until_no_error(call, what, self._all_running, deadline)
        except NotReadyError as error:
            raise self._start_error(self.nodes[0], error) from None

    def _all_running(self) -> bool:
        return all(broker.running() for broker in self.nodes)

    def _check(self, deadline: float, waiting_for: str) -> None:
        stopped = [broker for broker in self.nodes if not broker.running()]
        if stopped:
            raise self._start_error(stopped[0], NotReadyError("the broker process exited"))
        if time.monotonic() > deadline:
            raise self._start_error(self.nodes[0], NotReadyError(f"not ready: {waiting_for}"))

    def _start_error(self, broker: KafkaBroker, error: Exception) -> BrokerStartError:
        stopped = next((b for b in self.nodes if not b.running()), broker)
        return BrokerStartError(
            f"{self.title} did not become ready: {error}; see {stopped.log_path}"
            f"{first_error_suffix(stopped.log_path)}"
        )

    def _stop_nodes(self, keep_data: bool) -> None:
        # Brokers first, the controller last: a broker's controlled shutdown asks it.
        for broker in reversed(self.nodes):
            broker.stop(keep_data=keep_data)
        if not keep_data:
            self.nodes = []
