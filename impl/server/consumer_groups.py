"""The consumer protocol (KIP-848) on the wire: ConsumerGroupHeartbeat and ConsumerGroupDescribe
served by impl/kip848's coordinator, and the group APIs both protocols share routed by group id.
A regular-expression resolution a heartbeat starts completes at the server's next tick (`advance`
fires it with the due timers), so its group epoch bump reaches the next heartbeat.

A group id is either a classic group (the classic coordinator's) or a consumer group (the
consumer-protocol coordinator's), as in Kafka 4.x, where one coordinator keeps both kinds in one
map:
- OffsetCommit and OffsetFetch of a consumer group are judged by member id and member epoch
  (impl/kip848/offsets.py); every other group's go to the classic coordinator.
- ListGroups lists both kinds; DeleteGroups deletes each group where it lives.
- A ConsumerGroupHeartbeat join (epoch 0) for an Empty classic group deletes it, and the
  consumer group created keeps its offsets (Kafka 4.x, whatever the migration policy); for a
  non-empty classic group it is refused with GROUP_ID_NOT_FOUND (Kafka's answer while online
  upgrades are off), as is any other heartbeat for a classic group.
- A JoinGroup for an Empty consumer group deletes it and the classic coordinator takes the join,
  the offsets kept (committed into the new classic group). JoinGroup, SyncGroup, Heartbeat and
  LeaveGroup for a non-empty consumer group are served by the consumer-protocol coordinator: a
  classic member inside a consumer group (impl/kip848/classic_members.py), static members (a
  group instance id) included.
DescribeGroups goes to the classic coordinator, which does not hold a consumer group: it shows
it Dead, as Kafka 4.x's DescribeGroups v0-v5 does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from itertools import count
from typing import Any

from groupspec.impl.kip848 import ConsumerGroupCoordinator, Topic
from groupspec.impl.kip848.offsets import CommittedOffset
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary import responses as rs
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatResponse
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import EMPTY
from groupspec.vocabulary.requests import TopicPartition
from groupspec.wire.codec import Decoded
from groupspec.wire.group_apis import (
    BY_KEY,
    CONSUMER_BY_KEY,
    CONSUMER_GROUP_DESCRIBE,
    CONSUMER_GROUP_HEARTBEAT,
    DELETE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    SYNC_GROUP,
    GroupApi,
    as_is,
    read_consumer_requests,
    read_requests,
)

from .apis import Apis, Fields, Reply, topic_id
from .topics import TopicStore


def cluster_topics(topics: TopicStore) -> tuple[Topic, ...]:
    """The topic store's topics as the consumer-protocol coordinator's metadata (ids as the
    Metadata API reports them)."""
    return tuple(
        Topic(name, str(topic_id(name)), len(partitions))
        for name, partitions in sorted(topics.topics.items())
    )


class ConsumerGroupRouter:
    """Serves the consumer-protocol APIs and routes the shared group APIs by group id."""

    def __init__(self, apis: Apis, coordinator: ConsumerGroupCoordinator) -> None:
        self.apis = apis
        self.coordinator = coordinator
        self._refs = count()
        self._topic_count = -1

    def install(self) -> None:
        """Take over the handlers of the APIs this router serves or routes."""
        handlers = self.apis.handlers
        handlers[CONSUMER_GROUP_HEARTBEAT] = self.consumer_group_heartbeat
        handlers[CONSUMER_GROUP_DESCRIBE] = self.consumer_group_describe
        for key in (
            OFFSET_COMMIT,
            OFFSET_FETCH,
            LIST_GROUPS,
            DELETE_GROUPS,
            JOIN_GROUP,
            SYNC_GROUP,
            HEARTBEAT,
            LEAVE_GROUP,
        ):
            handlers[key] = self._routed(BY_KEY[key], handlers[key])

    def advance(self) -> None:
        """Fire the consumer-protocol timers that fell due."""
        self.coordinator.advance()

    # -- the consumer-protocol coordinator ----------------------------------------------------

    def call(self, request: Any, client: tuple[str, str] = ("", "")) -> Any:
        """The consumer-protocol coordinator's answer to `request` (always given at once);
        `client` is the sender's client id and host."""
        self._sync_topics()
        ref = ("kip848", next(self._refs))
        self.coordinator.handle(ref, request, client)
        outbox = self.coordinator.outbox
        assert outbox is not None
        return outbox.take()[ref]

    def _sync_topics(self) -> None:
        """Give the coordinator the topic store's metadata when a topic was created (topics
        are never deleted nor grown here, so their count tells)."""
        topics = self.apis.topics.topics
        if len(topics) != self._topic_count:
            self._topic_count = len(topics)
            self.coordinator.set_topics(cluster_topics(self.apis.topics))

    def consumer_group_heartbeat(self, request: Decoded, client_host: str) -> Reply:
        """ConsumerGroupHeartbeat v0-v1."""
        api = CONSUMER_BY_KEY[CONSUMER_GROUP_HEARTBEAT]
        version = request.head.api_version
        requests = read_consumer_requests(
            api.key, version, request.body, request.client_id, client_host
        )
        (heartbeat,) = requests
        if self._held_by_classic(heartbeat.group_id) and not (
            heartbeat.member_epoch == 0 and self._take_empty_classic_group(heartbeat.group_id)
        ):
            answer = ConsumerGroupHeartbeatResponse(ErrorCode.GROUP_ID_NOT_FOUND)
        else:
            answer = self.call(heartbeat, (request.client_id or "", client_host))
        return api.write_response((answer,), version, requests, as_is)

    def consumer_group_describe(self, request: Decoded, client_host: str) -> Reply:
        """ConsumerGroupDescribe v0-v1, with each topic's name next to its id."""
        api = CONSUMER_BY_KEY[CONSUMER_GROUP_DESCRIBE]
        version = request.head.api_version
        requests = read_consumer_requests(
            api.key, version, request.body, request.client_id, client_host
        )
        fields = api.write_response((self.call(requests[0]),), version, requests, as_is)
        names = {str(topic_id(name)): name for name in self.apis.topics.topics}
        for group in fields["groups"]:
            for member in group["members"]:
                for assignment in (member["assignment"], member["target_assignment"]):
                    for entry in assignment["topic_partitions"]:
                        entry["topic_name"] = names.get(str(entry["topic_id"]), "")
        return fields

    # -- routing the shared group APIs ----------------------------------------------------------

    def _held_by_classic(self, group_id: str) -> bool:
        return self.apis.coordinator.group(group_id) is not None

    def _take_empty_classic_group(self, group_id: str) -> bool:
        """Delete an Empty classic group for a consumer-protocol join, its offsets moving to
        the consumer group to come (Kafka 4.x deletes an Empty classic group whatever the
        migration policy, and keeps the offsets); False if the group is not Empty."""
        group = self.apis.coordinator.group(group_id)
        if group is None or group.state is not EMPTY:
            return False
        offsets = {
            TopicPartition(topic, partition): CommittedOffset(
                value.offset, value.leader_epoch, value.metadata or "", value.commit_timestamp_ms
            )
            for (topic, partition), value in group.offsets.items()
        }
        deleted = self.apis.call(rq.DeleteGroupsRequest((group_id,)))
        if not deleted.done() or deleted.result().results[0].error_code is not ErrorCode.NONE:
            return False
        self.coordinator.adopt_offsets(group_id, offsets)
        return True

    def _give_empty_consumer_group(self, group_id: str) -> bool:
        """Delete an Empty consumer group for a classic JoinGroup, its offsets committed into
        the classic group to come (an admin commit creates it, Empty); False if the consumer
        group is not Empty."""
        offsets = self.coordinator.take_empty_group(group_id)
        if offsets is None:
            return False
        if offsets:
            commit = rq.OffsetCommitRequest(
                group_id,
                tuple(
                    rq.OffsetCommitPartition(
                        p.topic, p.partition, value.offset, value.leader_epoch, value.metadata
                    )
                    for p, value in sorted(offsets.items())
                ),
            )
            self.apis.call(commit)
        return True

    def _routed(
        self, api: GroupApi, classic: Callable[[Decoded, str], Reply | None]
    ) -> Callable[[Decoded, str], Reply | None]:
        """The handler of a shared group API: the classic handler unless a request names a
        consumer group (or, for ListGroups, always both)."""

        def handle(request: Decoded, client_host: str) -> Reply | None:
            version = request.head.api_version
            requests = read_requests(api.key, version, request.body, request.client_id, client_host)
            holds = self.coordinator.holds
            if api.key == LIST_GROUPS:
                return self._list_groups(api, version, requests, classic(request, client_host))
            if api.key == DELETE_GROUPS:
                (delete,) = requests
                assert isinstance(delete, rq.DeleteGroupsRequest)
                if not any(holds(g) for g in delete.group_ids):
                    return classic(request, client_host)
                return self._delete_groups(api, version, delete)
            group_ids = [getattr(one, "group_id", "") for one in requests]
            if not any(holds(g) for g in group_ids):
                return classic(request, client_host)
            if api.key in (OFFSET_COMMIT, OFFSET_FETCH):
                return self._mixed(api, version, requests)
            # JoinGroup, SyncGroup, Heartbeat, LeaveGroup: a classic member of a consumer
            # group. An Empty consumer group becomes a classic group on a JoinGroup.
            if api.key == JOIN_GROUP and self._give_empty_consumer_group(group_ids[0]):
                return classic(request, client_host)
            if not self.coordinator.has_members(group_ids[0]):
                return classic(request, client_host)
            (one,) = requests
            return api.write_response((self.call(one),), version, requests, as_is)

        return handle

    def _mixed(self, api: GroupApi, version: int, requests: tuple[rq.Request, ...]) -> Reply:
        """OffsetCommit or OffsetFetch: each request answered where its group lives."""
        holds = self.coordinator.holds
        answers: list[Any] = []
        for one in requests:
            if holds(getattr(one, "group_id", "")):
                answers.append(_resolved(self.call(one)))
            else:
                answers.append(self.apis.call(one))
        if all(isinstance(a, asyncio.Future) and a.done() for a in answers):
            results = tuple(a.result() for a in answers)
            return api.write_response(results, version, requests, as_is)
        return _written_later(api, version, requests, answers)

    def _list_groups(
        self, api: GroupApi, version: int, requests: tuple[rq.Request, ...], classic: Any
    ) -> Reply:
        """The classic coordinator's groups, then the consumer groups."""
        (listing,) = requests
        mine: rs.ListGroupsResponse = self.call(listing)
        if not isinstance(classic, dict):
            raise RuntimeError("ListGroups is always answered at once")
        fields: Fields = classic
        groups = list(fields["groups"])
        for group in mine.groups:
            groups.append(
                {
                    "group_id": group.group_id,
                    "protocol_type": group.protocol_type,
                    "group_state": group.group_state,
                    "group_type": group.group_type,
                }
            )
        return {**fields, "groups": groups}

    def _delete_groups(self, api: GroupApi, version: int, delete: rq.DeleteGroupsRequest) -> Reply:
        """Each group deleted where it lives, the results in the order asked."""
        holds = self.coordinator.holds
        consumer = tuple(g for g in delete.group_ids if holds(g))
        classic = tuple(g for g in delete.group_ids if not holds(g))
        results: dict[str, rs.DeleteGroupsResult] = {}
        mine: rs.DeleteGroupsResponse = self.call(
            rq.DeleteGroupsRequest(consumer, api_version=delete.api_version)
        )
        results.update((r.group_id, r) for r in mine.results)
        if classic:
            future = self.apis.call(rq.DeleteGroupsRequest(classic, api_version=delete.api_version))
            if not future.done():
                raise RuntimeError("DeleteGroups is always answered at once")
            results.update((r.group_id, r) for r in future.result().results)
        answer = rs.DeleteGroupsResponse(tuple(results[g] for g in delete.group_ids))
        return api.write_response((answer,), version, (delete,), as_is)


def _resolved(value: Any) -> asyncio.Future[Any]:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    future.set_result(value)
    return future


async def _written_later(
    api: GroupApi,
    version: int,
    requests: tuple[rq.Request, ...],
    futures: list[asyncio.Future[Any]],
) -> Fields:
    answers = tuple([await future for future in futures])
    return api.write_response(answers, version, requests, as_is)
