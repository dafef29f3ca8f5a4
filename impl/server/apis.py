"""The broker's request handlers: a decoded kafka-python request in, response fields out.

Every group API is served by one path over its entry in `wire.group_apis`: the request's fields
are read into the vocabulary's request(s), the coordinator answers them through its `respond`
callback, possibly much later (a parked JoinGroup), and the entry writes the answers as the
response's fields. FindCoordinator alone adds something of its own: this broker's address, and
INVALID_REQUEST for a key type other than group. The data APIs (Produce, ListOffsets, Fetch,
Metadata, CreateTopics) are served here from the `TopicStore`.
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
from groupspec.wire import codec
from groupspec.wire.codec import Decoded
from groupspec.wire.group_apis import (
    GROUP_APIS,
    GroupApi,
    UnmodelledRequest,
    as_is,
    read_requests,
)

from .topics import InvalidBatchError, TopicStore, split_batches

Fields = dict[str, Any]
Reply = Fields | Awaitable[Fields]

UNKNOWN_TOPIC = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_ID = 100
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
            **{api.key: self._group_handler(api) for api in GROUP_APIS},
            codec.FIND_COORDINATOR: self.find_coordinator,
            codec.API_VERSIONS: self.api_versions,
            codec.METADATA: self.metadata,
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
            names: list[str | uuid.UUID] = list(sorted(self.topics.topics))
        else:
            # v10+ may name a topic by id alone (a consumer-protocol client looking up the
            # topic ids of its assignment).
            names = [
                t.name if t.name is not None else getattr(t, "topic_id", None) or ""
                for t in body.topics
            ]
        by_id = {topic_id(name): name for name in self.topics.topics}
        topics = []
        for wanted in names:
            if isinstance(wanted, uuid.UUID):
                found = by_id.get(wanted)
                if found is None:
                    topics.append(_unknown_topic_id(wanted))
                    continue
                wanted = found
            name = wanted
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
        """This broker, for group keys; other key types are not served (INVALID_REQUEST)."""
        version = request.head.api_version
        body = request.body
        answers: list[tuple[str, int, str | None, int]] = []
        try:
            lookups = read_requests(
                codec.FIND_COORDINATOR, version, body, request.client_id, client_host
            )
        except UnmodelledRequest:  # a transaction or share-group coordinator is asked for
            keys = body.coordinator_keys if version >= 4 else [body.key]
            answers = [(key, int(ErrorCode.INVALID_REQUEST), "only group keys", -1) for key in keys]
        else:
            for lookup in lookups:
                assert isinstance(lookup, rq.FindCoordinatorRequest)
                response = _now(self.call(lookup))
                answers.append((lookup.key, int(response.error_code), None, response.node_id))
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
        _, error, message, node = answers[0]
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "error_message": message,
            "node_id": node,
            "host": self.host if error == 0 else "",
            "port": self.port if error == 0 else -1,
        }

    # -- groups -------------------------------------------------------------------------------

    def _group_handler(self, api: GroupApi) -> Callable[[Decoded, str], Reply]:
        """The handler of a group API: its fields read into the vocabulary's request(s), each
        handed to the coordinator, the answers written back as the response's fields (at once,
        or when the last parked one comes)."""

        def handle(request: Decoded, client_host: str) -> Reply:
            version = request.head.api_version
            requests = read_requests(api.key, version, request.body, request.client_id, client_host)
            futures = [self.call(one) for one in requests]
            for future in futures:
                if not future.done():
                    return _written(api, version, requests, futures)
            answers = tuple([future.result() for future in futures])
            return api.write_response(answers, version, requests, as_is)

        return handle

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


def _unknown_topic_id(wanted: uuid.UUID) -> Fields:
    """Metadata's answer about a topic id no topic has (Kafka's UNKNOWN_TOPIC_ID, no name)."""
    return {
        "error_code": UNKNOWN_TOPIC_ID,
        "name": None,
        "topic_id": wanted,
        "is_internal": False,
        "partitions": [],
    }


def _now(future: asyncio.Future[Any]) -> Any:
    """The result of a coordinator call that is always answered at once."""
    if not future.done():
        raise RuntimeError("the coordinator parked a request that it always answers at once")
    return future.result()


async def _written(
    api: GroupApi,
    version: int,
    requests: tuple[rq.Request, ...],
    futures: list[asyncio.Future[Any]],
) -> Fields:
    """The response's fields once every parked request is answered."""
    answers = tuple([await future for future in futures])
    return api.write_response(answers, version, requests, as_is)
