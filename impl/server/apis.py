"""One function per Kafka API: a decoded kafka-python request in, response fields out.

Group APIs become `groupspec.impl` requests served by the coordinator; their answers come back
through the coordinator's `respond` callback, possibly much later (a parked JoinGroup), so the
group handlers return futures. The data APIs (Produce, ListOffsets, Fetch, Metadata,
CreateTopics) are served here from the `TopicStore`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from itertools import count
from typing import Any

from groupspec.impl.coordinator import Coordinator
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary.errors import ErrorCode
from groupspec.wire import codec, group_fields
from groupspec.wire.codec import Decoded

from .topics import InvalidBatchError, TopicStore, split_batches

Fields = dict[str, Any]
Reply = Fields | Awaitable[Fields]

UNKNOWN_TOPIC = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_TOPIC = 17
MAX_FETCH_WAIT_S = 30.0
# librdkafka and kafka-python take the cluster id as an opaque string.
CLUSTER_ID = "groupspec-serve"


def topic_id(name: str) -> uuid.UUID:
    """A stable topic id (Metadata v10+ reports one; nothing here looks topics up by it)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"groupspec:topic:{name}")


class Apis:
    """The broker's request handlers: a coordinator, a topic store, and where it listens."""

    def __init__(
        self,
        coordinator_factory: Callable[[Callable[[Any, Any], None]], Coordinator],
        topics: TopicStore,
        host: str,
        port: int,
        node_id: int = 0,
    ) -> None:
        self.coordinator = coordinator_factory(self._on_response)
        self.topics = topics
        self.host = host
        self.port = port
        self.node_id = node_id
        self._refs = count()
        self._producer_ids = count(1000)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        # A handler answers None for a request that gets no response (produce with acks=0).
        self.handlers: dict[int, Callable[[Decoded, str], Reply | None]] = {
            codec.API_VERSIONS: self.api_versions,
            codec.METADATA: self.metadata,
            codec.FIND_COORDINATOR: self.find_coordinator,
            codec.JOIN_GROUP: self.join_group,
            codec.SYNC_GROUP: self.sync_group,
            codec.HEARTBEAT: self.heartbeat,
            codec.LEAVE_GROUP: self.leave_group,
            codec.OFFSET_COMMIT: self.offset_commit,
            codec.OFFSET_FETCH: self.offset_fetch,
            codec.DESCRIBE_GROUPS: self.describe_groups,
            codec.LIST_GROUPS: self.list_groups,
            codec.DELETE_GROUPS: self.delete_groups,
            codec.CREATE_TOPICS: self.create_topics,
            codec.PRODUCE: self.produce,
            codec.LIST_OFFSETS: self.list_offsets,
            codec.FETCH: self.fetch,
            codec.INIT_PRODUCER_ID: self.init_producer_id,
        }

    # -- the coordinator ----------------------------------------------------------------------

    def _on_response(self, ref: Any, response: Any) -> None:
        future = self._waiting.pop(ref, None)
        # A future is gone or done when its connection closed before a parked answer came.
        if future is not None and not future.done():
            future.set_result(response)

    def call(self, request: rq.Request) -> asyncio.Future[Any]:
        """Hand `request` to the coordinator; the future gets its response (maybe later)."""
        ref = next(self._refs)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[ref] = future
        try:
            self.coordinator.handle(ref, request)
        except BaseException:
            self._waiting.pop(ref, None)
            raise
        return future

    def pending_count(self) -> int:
        """Coordinator requests still waiting for an answer (parked joins and syncs)."""
        return len(self._waiting)

    # -- metadata -----------------------------------------------------------------------------

    def api_versions(self, request: Decoded, client_host: str) -> Reply:
        """The version ranges served."""
        return {
            "error_code": 0,
            "api_keys": [
                {"api_key": key, "min_version": low, "max_version": high}
                for key, (low, high) in sorted(codec.SUPPORTED_VERSIONS.items())
            ],
            "throttle_time_ms": 0,
        }

    def metadata(self, request: Decoded, client_host: str) -> Reply:
        """This one broker, and the requested (or all) topics."""
        body = request.body
        if body.topics is None or (request.head.api_version == 0 and not body.topics):
            names = sorted(self.topics.topics)
        else:
            names = [t.name for t in body.topics if t.name is not None]
        topics = []
        for name in names:
            partitions = self.topics.topics.get(name)
            topics.append(
                {
                    "error_code": 0 if partitions is not None else UNKNOWN_TOPIC,
                    "name": name,
                    "topic_id": topic_id(name),
                    "is_internal": False,
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition_index": index,
                            "leader_id": self.node_id,
                            "leader_epoch": -1,
                            "replica_nodes": [self.node_id],
                            "isr_nodes": [self.node_id],
                            "offline_replicas": [],
                        }
                        for index in range(len(partitions or []))
                    ],
                }
            )
        return {
            "throttle_time_ms": 0,
            "brokers": [
                {"node_id": self.node_id, "host": self.host, "port": self.port, "rack": None}
            ],
            "cluster_id": CLUSTER_ID,
            "controller_id": self.node_id,
            "topics": topics,
        }

    def create_topics(self, request: Decoded, client_host: str) -> Reply:
        """Create each new topic with its partition count (replication factor 1 or -1 only)."""
        body = request.body
        results = []
        for topic in body.topics:
            error, message = 0, None
            partitions = topic.num_partitions
            if not topic.name or len(topic.name) > 249:
                error, message = INVALID_TOPIC, "invalid topic name"
            elif topic.name in self.topics.topics:
                error, message = TOPIC_ALREADY_EXISTS, f"topic {topic.name} already exists"
            elif partitions == -1:
                partitions = 1
            if error == 0 and not 1 <= partitions <= 10_000:
                error, message = INVALID_PARTITIONS, f"{partitions} partitions"
            elif error == 0 and topic.replication_factor not in (-1, 1):
                error, message = INVALID_REPLICATION_FACTOR, "this broker has one node"
            if error == 0 and not body.validate_only:
                self.topics.create(topic.name, partitions)
            results.append(
                {
                    "name": topic.name,
                    "topic_id": topic_id(topic.name),
                    "error_code": error,
                    "error_message": message,
                    "num_partitions": partitions if error == 0 else -1,
                    "replication_factor": 1 if error == 0 else -1,
                    "configs": [],
                }
            )
        return {"throttle_time_ms": 0, "topics": results}

    def find_coordinator(self, request: Decoded, client_host: str) -> Reply:
        """This broker, for group keys; other key types are not served."""
        body = request.body
        version = request.head.api_version
        keys = list(body.coordinator_keys) if version >= 4 else [body.key]
        key_type = body.key_type if version >= 1 else 0
        answers: list[tuple[str, int, str | None, int]] = []
        for key in keys:
            if key_type != rq.GROUP_KEY_TYPE:
                answers.append((key, int(ErrorCode.INVALID_REQUEST), "only group keys", -1))
                continue
            response = _now(self.call(rq.FindCoordinatorRequest(key, api_version=min(version, 6))))
            error = int(response.error_code)
            answers.append((key, error, None, response.node_id))
        if version >= 4:
            return {
                "throttle_time_ms": 0,
                "coordinators": [
                    {
                        "key": key,
                        "node_id": node,
                        "host": self.host if error == 0 else "",
                        "port": self.port if error == 0 else -1,
                        "error_code": error,
                        "error_message": message,
                    }
                    for key, error, message, node in answers
                ],
            }
        key, error, message, node = answers[0]
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "error_message": message,
            "node_id": node,
            "host": self.host if error == 0 else "",
            "port": self.port if error == 0 else -1,
        }

    # -- groups -------------------------------------------------------------------------------

    def join_group(self, request: Decoded, client_host: str) -> Reply:
        """JoinGroup through the coordinator (answered when the rebalance completes)."""
        body = request.body
        version = request.head.api_version
        join = rq.JoinGroupRequest(
            group_id=body.group_id,
            member_id=body.member_id,
            protocol_type=body.protocol_type,
            protocols=tuple(
                rq.JoinGroupProtocol(p.name, bytes(p.metadata)) for p in body.protocols
            ),
            session_timeout_ms=body.session_timeout_ms,
            rebalance_timeout_ms=body.rebalance_timeout_ms if version >= 1 else -1,
            group_instance_id=body.group_instance_id if version >= 5 else None,
            client_id=request.client_id or "",
            client_host=client_host,
            reason=body.reason if version >= 8 else None,
            api_version=version,
        )
        return _then(self.call(join), lambda response: group_fields.join_fields(response, version))

    def sync_group(self, request: Decoded, client_host: str) -> Reply:
        """SyncGroup through the coordinator (followers wait for the leader's assignment)."""
        body = request.body
        version = request.head.api_version
        sync = rq.SyncGroupRequest(
            group_id=body.group_id,
            generation_id=body.generation_id,
            member_id=body.member_id,
            group_instance_id=body.group_instance_id if version >= 3 else None,
            protocol_type=body.protocol_type if version >= 5 else None,
            protocol_name=body.protocol_name if version >= 5 else None,
            assignments=tuple(
                rq.SyncGroupAssignment(a.member_id, bytes(a.assignment)) for a in body.assignments
            ),
            api_version=version,
        )
        return _then(self.call(sync), group_fields.sync_fields)

    def heartbeat(self, request: Decoded, client_host: str) -> Reply:
        """Heartbeat through the coordinator."""
        body = request.body
        version = request.head.api_version
        beat = rq.HeartbeatRequest(
            body.group_id,
            body.generation_id,
            body.member_id,
            body.group_instance_id if version >= 3 else None,
            api_version=version,
        )
        response = _now(self.call(beat))
        return {"throttle_time_ms": 0, "error_code": int(response.error_code)}

    def leave_group(self, request: Decoded, client_host: str) -> Reply:
        """LeaveGroup through the coordinator; v3+ carries several members."""
        body = request.body
        version = request.head.api_version
        if version < 3:
            members: tuple[rq.MemberIdentity, ...] = (rq.MemberIdentity(body.member_id),)
        else:
            members = tuple(
                rq.MemberIdentity(
                    m.member_id, m.group_instance_id, m.reason if version >= 5 else None
                )
                for m in body.members
            )
        response = _now(
            self.call(rq.LeaveGroupRequest(body.group_id, members, api_version=version))
        )
        return group_fields.leave_fields(response)

    def offset_commit(self, request: Decoded, client_host: str) -> Reply:
        """OffsetCommit through the coordinator."""
        body = request.body
        version = request.head.api_version
        partitions = tuple(
            rq.OffsetCommitPartition(
                topic.name,
                p.partition_index,
                p.committed_offset,
                p.committed_leader_epoch if version >= 6 else -1,
                p.committed_metadata,
            )
            for topic in body.topics
            for p in topic.partitions
        )
        commit = rq.OffsetCommitRequest(
            group_id=body.group_id,
            partitions=partitions,
            generation_id=body.generation_id_or_member_epoch,
            member_id=body.member_id,
            group_instance_id=body.group_instance_id if version >= 7 else None,
            retention_time_ms=body.retention_time_ms if 2 <= version <= 4 else -1,
            api_version=version,
        )
        return group_fields.commit_fields(_now(self.call(commit)))

    def offset_fetch(self, request: Decoded, client_host: str) -> Reply:
        """OffsetFetch (one group, v1–v7) through the coordinator."""
        body = request.body
        version = request.head.api_version
        partitions = (
            None
            if body.topics is None
            else tuple(
                rq.TopicPartition(t.name, index)
                for t in body.topics
                for index in t.partition_indexes
            )
        )
        fetch = rq.OffsetFetchRequest(
            body.group_id,
            partitions,
            require_stable=bool(body.require_stable) if version >= 7 else False,
            api_version=version,
        )
        return group_fields.fetch_fields(_now(self.call(fetch)), version)

    def describe_groups(self, request: Decoded, client_host: str) -> Reply:
        """DescribeGroups through the coordinator."""
        version = request.head.api_version
        response = _now(
            self.call(rq.DescribeGroupsRequest(tuple(request.body.groups), api_version=version))
        )
        return group_fields.describe_fields(response)

    def list_groups(self, request: Decoded, client_host: str) -> Reply:
        """ListGroups through the coordinator."""
        body = request.body
        version = request.head.api_version
        states = tuple(body.states_filter) if version >= 4 else ()
        response = _now(self.call(rq.ListGroupsRequest(states, api_version=version)))
        return group_fields.list_fields(response)

    def delete_groups(self, request: Decoded, client_host: str) -> Reply:
        """DeleteGroups through the coordinator."""
        version = request.head.api_version
        response = _now(
            self.call(rq.DeleteGroupsRequest(tuple(request.body.groups_names), api_version=version))
        )
        return group_fields.delete_fields(response)

    # -- records ------------------------------------------------------------------------------

    def produce(self, request: Decoded, client_host: str) -> Reply | None:
        """Append v2 record batches; acks=0 gets no response (None)."""
        body = request.body
        topics = []
        appended = False
        for topic in body.topic_data:
            parts = []
            for data in topic.partition_data:
                log = self.topics.partition(topic.name, data.index)
                error, base = 0, -1
                if log is None:
                    error = UNKNOWN_TOPIC
                else:
                    try:
                        batches = split_batches(bytes(data.records or b""))
                    except InvalidBatchError:
                        error = CORRUPT_MESSAGE
                    else:
                        base = log.append(batches)
                        appended = appended or bool(batches)
                parts.append(
                    {
                        "index": data.index,
                        "error_code": error,
                        "base_offset": base,
                        "log_append_time_ms": -1,
                        "log_start_offset": 0 if error == 0 else -1,
                        "record_errors": [],
                        "error_message": None,
                    }
                )
            topics.append({"name": topic.name, "partition_responses": parts})
        if appended:
            self.topics.notify()
        if body.acks == 0:
            return None
        return {"responses": topics, "throttle_time_ms": 0}

    def init_producer_id(self, request: Decoded, client_host: str) -> Reply:
        """A fresh producer id for idempotent producers; transactions are not served."""
        if request.body.transactional_id is not None:
            return {
                "throttle_time_ms": 0,
                "error_code": int(ErrorCode.COORDINATOR_NOT_AVAILABLE),
                "producer_id": -1,
                "producer_epoch": -1,
            }
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "producer_id": next(self._producer_ids),
            "producer_epoch": 0,
        }

    def list_offsets(self, request: Decoded, client_host: str) -> Reply:
        """Earliest, latest, or by timestamp; leader epochs are unknown (-1)."""
        topics = []
        for topic in request.body.topics:
            parts = []
            for p in topic.partitions:
                log = self.topics.partition(topic.name, p.partition_index)
                parts.append(
                    {
                        "partition_index": p.partition_index,
                        "error_code": UNKNOWN_TOPIC if log is None else 0,
                        "timestamp": -1,
                        "offset": -1 if log is None else log.offset_for_timestamp(p.timestamp),
                        "leader_epoch": -1,
                    }
                )
            topics.append({"name": topic.name, "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}

    def fetch(self, request: Decoded, client_host: str) -> Reply:
        """Records from each requested partition; waits up to max_wait for min_bytes."""
        return self._fetch(request)

    async def _fetch(self, request: Decoded) -> Fields:
        body = request.body
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(max(body.max_wait_ms, 0) / 1000, MAX_FETCH_WAIT_S)
        while True:
            fields, size = self._fetch_once(request)
            remaining = deadline - loop.time()
            if size >= max(body.min_bytes, 1) or remaining <= 0:
                return fields
            await self.topics.wait_for_append(remaining)

    def _fetch_once(self, request: Decoded) -> tuple[Fields, int]:
        body = request.body
        budget = body.max_bytes if request.head.api_version >= 3 else 2**31 - 1
        total = 0
        topics = []
        for topic in body.topics:
            parts = []
            for p in topic.partitions:
                log = self.topics.partition(topic.topic, p.partition)
                error, records, high = 0, b"", -1
                if log is None:
                    error = UNKNOWN_TOPIC
                elif not 0 <= p.fetch_offset <= log.high_watermark:
                    error, high = OFFSET_OUT_OF_RANGE, log.high_watermark
                else:
                    high = log.high_watermark
                    limit = max(min(p.partition_max_bytes, budget - total), 0)
                    # The first partition with data always gets a whole batch, as in Kafka.
                    records = log.read(p.fetch_offset, limit) if limit or total == 0 else b""
                    total += len(records)
                parts.append(
                    {
                        "partition_index": p.partition,
                        "error_code": error,
                        "high_watermark": high,
                        "last_stable_offset": high,
                        "log_start_offset": 0 if log is not None else -1,
                        "aborted_transactions": None,
                        "preferred_read_replica": -1,
                        "records": records,
                    }
                )
            topics.append({"topic": topic.topic, "partitions": parts})
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": topics}, total


def _now(future: asyncio.Future[Any]) -> Any:
    """The result of a coordinator call that is always answered at once."""
    if not future.done():
        raise RuntimeError("the coordinator parked a request that it always answers at once")
    return future.result()


async def _then(future: asyncio.Future[Any], convert: Callable[[Any], Fields]) -> Fields:
    return convert(await future)
