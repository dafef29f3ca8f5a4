"""How the serve bench forms its groups on any Kafka broker, as a standard consumer would.

The steps a Kafka consumer takes, and nothing a broker may skip: ApiVersions (every version the
load uses must be served), Metadata for the bench's topic (created with CreateTopics where the
broker does not create it on Metadata), FindCoordinator for each group, then on the coordinator
JoinGroup (with the MEMBER_ID_REQUIRED round when the broker asks for it) and SyncGroup with
real ConsumerProtocol subscriptions and assignments.

Every answer is checked against what Kafka can answer at that step. An answer Kafka never gives
is a deviation: `FormationError`, whose one-line message names the request, the answer seen and
the answers expected. Answers a Kafka client retries (a coordinator loading, a rebalance) are
retried; a formation that never completes is ended by the caller's timeout, and
`FormationProgress.summary` says what each member still waits for.

One ordering choice: a group leader sends its SyncGroup only after its followers have sent
theirs. Kafka allows any order, so this is standard; it keeps librdkafka's mock cluster, which
answers a follower syncing after its leader with INVALID_REQUEST (docs/serve.md), comparable.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

from kafka.errors import for_code
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.group import (
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

from groupspec.spec.assignment import TopicPartition
from groupspec.spec.consumer_protocol import encode_assignment, encode_subscription_v0
from groupspec.wire.address import Address
from groupspec.wire.request_connection import NoAnswerError, RequestConnection

API_VERSIONS_VERSION = 0
METADATA_VERSION = 4  # the first with allow_auto_topic_creation
CREATE_TOPICS_VERSION = 4  # the first with replication factor -1 (the broker's default)
FIND_COORDINATOR_VERSION = 1
JOIN_VERSION = 5
SYNC_VERSION = 3
HEARTBEAT_VERSION = 3
COMMIT_VERSION = 7
LEAVE_VERSION = 1
API_KEYS = {
    "Metadata": (3, METADATA_VERSION),
    "OffsetCommit": (8, COMMIT_VERSION),
    "FindCoordinator": (10, FIND_COORDINATOR_VERSION),
    "JoinGroup": (11, JOIN_VERSION),
    "Heartbeat": (12, HEARTBEAT_VERSION),
    "SyncGroup": (14, SYNC_VERSION),
}
CREATE_TOPICS_KEY = 19

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
TOPIC_ALREADY_EXISTS = 36
MEMBER_ID_REQUIRED = 79
COORDINATOR_RETRIABLE = frozenset(
    {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR}
)
REBALANCE_ERRORS = frozenset({ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS})

CLIENT_ID = "groupspec-bench"
# A Kafka client's socket.connection.setup.timeout.ms (librdkafka's and Java's default).
CONNECTION_SETUP_TIMEOUT_S = 10.0
TOPIC = "bench"
PROTOCOL = "range"
SESSION_TIMEOUT_MS = 10_000
REBALANCE_TIMEOUT_MS = 30_000
RETRY_BACKOFF_S = 0.1
# How long a leader waits for its followers' SyncGroups to be written, then to be read.
LEADER_WAIT_CAP_S = 1.0
LEADER_SETTLE_S = 0.05
# A member leaves at the end, as a closing consumer does, so a rerun on the same broker does not
# wait for the old members' sessions to expire; the answer does not matter and is not awaited long.
LEAVE_TIMEOUT_S = 1.0


class FormationError(Exception):
    """A broker answered what Kafka never answers, or groups did not form (one line)."""


def error_name(code: int) -> str:
    """`INVALID_REQUEST (42)`: a Kafka error code with its name."""
    error = for_code(code)
    name = getattr(error, "message", None) if error.__name__ != "UnrecognizedBrokerError" else None
    return f"{name or 'UNKNOWN_CODE'} ({code})"


def _expected(codes: Iterable[int]) -> str:
    return ", ".join(error_name(code) for code in sorted(codes))


def deviation(request: str, code: int, allowed: Iterable[int], detail: str = "") -> FormationError:
    """The error for `request` answered `code` where Kafka answers one of `allowed`."""
    tail = f" ({detail})" if detail else ""
    return FormationError(
        f"{request} answered {error_name(code)}{tail}; Kafka answers {_expected(allowed)}"
    )


SETUP = "setup"


class FormationProgress:
    """What the setup and each member wait for, so a timeout can say where formation stopped."""

    def __init__(self) -> None:
        self._waiting: dict[str, str] = {}
        self._last_answer: dict[str, str] = {}
        self._formed: set[str] = set()

    def waiting(self, who: str, what: str) -> None:
        """`who` (a member, or SETUP) now waits for `what` (e.g. "a JoinGroup v5 response")."""
        self._waiting[who] = what
        self._formed.discard(who)

    def answered(self, who: str, answer: str) -> None:
        """`who` got `answer`, an error it retries; the summary repeats the latest."""
        self._last_answer[who] = answer

    def done(self, who: str) -> None:
        """`who` is formed (or the setup is done): nothing to wait for."""
        self._waiting.pop(who, None)
        if who != SETUP:
            self._formed.add(who)

    def summary(self, members: int) -> str:
        """One line: how many formed, what the rest wait for, the last answer one retried."""
        parts = [f"{len(self._formed)} of {members} members formed"]
        if SETUP in self._waiting:
            parts.append(f"the setup waits for {self._waiting[SETUP]}")
        waits = Counter(what for who, what in self._waiting.items() if who != SETUP)
        parts += [f"{count} waiting for {what}" for what, count in sorted(waits.items())]
        example = next((who for who in self._waiting if who in self._last_answer), None)
        if example is not None:
            parts.append(f"{example}'s last answer: {self._last_answer[example]}")
        return "; ".join(parts)


async def connect(
    address: Address, who: str, progress: FormationProgress
) -> tuple[RequestConnection, dict[int, tuple[int, int]]]:
    """A connection to `address` whose ApiVersions was answered, and the versions it serves.

    As a Kafka client sets a connection up: one whose ApiVersions is not answered within
    CONNECTION_SETUP_TIMEOUT_S is closed and opened again (socket.connection.setup.timeout.ms).
    """
    request = f"ApiVersions v{API_VERSIONS_VERSION}"
    while True:
        progress.waiting(who, f"an {request} response")
        connection = await RequestConnection.open(address, CLIENT_ID)
        try:
            response = await asyncio.wait_for(
                connection.call(ApiVersionsRequest(), ApiVersionsResponse, API_VERSIONS_VERSION),
                CONNECTION_SETUP_TIMEOUT_S,
            )
        except TimeoutError:
            connection.close()
            progress.answered(
                who, f"no {request} answer within {CONNECTION_SETUP_TIMEOUT_S:g} s (reconnected)"
            )
            continue
        except BaseException:
            connection.close()
            raise
        if response.error_code != NONE:
            connection.close()
            raise deviation(f"{request} from {address}", response.error_code, [NONE])
        return connection, {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def check_versions(address: Address, served: dict[int, tuple[int, int]]) -> bool:
    """FormationError if a version the load uses is not `served`; whether the broker serves
    CreateTopics at the version the load would use."""
    for name, (key, version) in API_KEYS.items():
        low, high = served.get(key, (0, -1))
        if not low <= version <= high:
            shown = f"v{low}–v{high}" if low <= high else "no version"
            raise FormationError(f"{address} serves {name} {shown}; the load uses v{version}")
    low, high = served.get(CREATE_TOPICS_KEY, (0, -1))
    return low <= CREATE_TOPICS_VERSION <= high


async def ensure_topic(
    connection: RequestConnection, partitions: int, can_create: bool, progress: FormationProgress
) -> int:
    """Make sure the bench topic exists (Metadata, else CreateTopics); its partition count."""
    created = False
    while True:
        progress.waiting(SETUP, f"a Metadata v{METADATA_VERSION} response for topic {TOPIC}")
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)],
            allow_auto_topic_creation=True,
        )
        response = await connection.call(request, MetadataResponse, METADATA_VERSION)
        topic = next((t for t in response.topics if t.name == TOPIC), None)
        code = UNKNOWN_TOPIC_OR_PARTITION if topic is None else topic.error_code
        if code == NONE and topic is not None and topic.partitions:
            return len(topic.partitions)
        if code not in (NONE, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE):
            raise deviation(
                f"Metadata v{METADATA_VERSION} for topic {TOPIC}",
                code,
                [NONE, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE],
            )
        note = "" if can_create else " (the broker serves no CreateTopics v4)"
        progress.answered(SETUP, f"Metadata {error_name(code)} for topic {TOPIC}{note}")
        if code == UNKNOWN_TOPIC_OR_PARTITION and can_create and not created:
            await _create_topic(connection, partitions, progress)
            created = True
        await asyncio.sleep(RETRY_BACKOFF_S)


async def _create_topic(
    connection: RequestConnection, partitions: int, progress: FormationProgress
) -> None:
    progress.waiting(SETUP, f"a CreateTopics v{CREATE_TOPICS_VERSION} response")
    topic = CreateTopicsRequest.CreatableTopic(
        name=TOPIC,
        num_partitions=partitions,
        replication_factor=-1,
        assignments=[],
        configs=[],
    )
    response = await connection.call(
        CreateTopicsRequest(topics=[topic], timeout_ms=30_000, validate_only=False),
        CreateTopicsResponse,
        CREATE_TOPICS_VERSION,
    )
    for result in response.topics:
        if result.error_code not in (NONE, TOPIC_ALREADY_EXISTS):
            raise deviation(
                f"CreateTopics v{CREATE_TOPICS_VERSION} for topic {TOPIC}",
                result.error_code,
                [NONE, TOPIC_ALREADY_EXISTS],
                result.error_message or "",
            )


async def find_coordinator(
    connection: RequestConnection, group: str, progress: FormationProgress
) -> Address:
    """The coordinator of `group` (FindCoordinator, retried while none is available)."""
    request_name = f"FindCoordinator v{FIND_COORDINATOR_VERSION} for group {group}"
    while True:
        progress.waiting(SETUP, f"a FindCoordinator v{FIND_COORDINATOR_VERSION} response")
        response = await connection.call(
            FindCoordinatorRequest(key=group, key_type=0),
            FindCoordinatorResponse,
            FIND_COORDINATOR_VERSION,
        )
        if response.error_code == NONE:
            return Address(response.host, response.port)
        if response.error_code not in COORDINATOR_RETRIABLE:
            raise deviation(request_name, response.error_code, {NONE} | COORDINATOR_RETRIABLE)
        progress.answered(SETUP, f"{request_name}: {error_name(response.error_code)}")
        await asyncio.sleep(RETRY_BACKOFF_S)


class SyncOrder:
    """One group's SyncGroup order: the leader sends after its followers (see the docstring)."""

    def __init__(self) -> None:
        self._sent: Counter[int] = Counter()
        self._changed = asyncio.Condition()

    async def follower_sent(self, generation: int) -> None:
        """A follower of `generation` has written its SyncGroup."""
        async with self._changed:
            self._sent[generation] += 1
            self._changed.notify_all()

    async def leader_turn(self, generation: int, followers: int) -> None:
        """Return once `followers` SyncGroups of `generation` are written (or after a cap)."""
        async with self._changed:
            # A follower late or gone does not hold the leader up: Kafka needs no order.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self._sent[generation] >= followers),
                    LEADER_WAIT_CAP_S,
                )
        await asyncio.sleep(LEADER_SETTLE_S)


class GroupMember:
    """One member's identity in its group, and the JoinGroup/SyncGroup round that forms it."""

    def __init__(
        self, group: str, index: int, partitions: int, order: SyncOrder, progress: FormationProgress
    ) -> None:
        self.group, self.index, self.partitions = group, index, partitions
        self.label = f"{group}/{index}"
        self.member_id = ""
        self.generation = -1
        self._order = order
        self._progress = progress

    async def join(self, connection: RequestConnection) -> None:
        """JoinGroup then SyncGroup until the member holds an assignment of a generation."""
        while True:
            joined = await self._join_once(connection)
            if joined is not None and await self._sync(connection, joined):
                self._progress.done(self.label)
                return

    async def leave(self, connection: RequestConnection) -> None:
        """LeaveGroup, as a closing consumer sends it (its answer is not judged)."""
        request = LeaveGroupRequest(group_id=self.group, member_id=self.member_id)
        with contextlib.suppress(TimeoutError, NoAnswerError):
            await asyncio.wait_for(
                connection.call(request, LeaveGroupResponse, LEAVE_VERSION), LEAVE_TIMEOUT_S
            )

    def _retry(self, request: str, code: int) -> None:
        self._progress.answered(self.label, f"{request} {error_name(code)}")

    async def _join_once(self, connection: RequestConnection) -> Any:
        request = f"JoinGroup v{JOIN_VERSION}"
        self._progress.waiting(self.label, f"a {request} response")
        response = await connection.call(
            JoinGroupRequest(
                group_id=self.group,
                session_timeout_ms=SESSION_TIMEOUT_MS,
                rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
                member_id=self.member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[
                    JoinGroupRequest.JoinGroupRequestProtocol(
                        name=PROTOCOL, metadata=encode_subscription_v0((TOPIC,))
                    )
                ],
            ),
            JoinGroupResponse,
            JOIN_VERSION,
        )
        code = response.error_code
        if code == NONE:
            self.member_id, self.generation = response.member_id, response.generation_id
            return response
        if code == MEMBER_ID_REQUIRED and not self.member_id and response.member_id:
            self.member_id = response.member_id
            return None
        if code in (UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS) or code in COORDINATOR_RETRIABLE:
            self._retry(request, code)
            self.member_id = "" if code == UNKNOWN_MEMBER_ID else self.member_id
            await asyncio.sleep(RETRY_BACKOFF_S)
            return None
        allowed = {NONE, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS} | COORDINATOR_RETRIABLE
        if not self.member_id:
            allowed.add(MEMBER_ID_REQUIRED)
        raise deviation(f"{request} of {self.label}", code, allowed)

    async def _sync(self, connection: RequestConnection, joined: Any) -> bool:
        request = f"SyncGroup v{SYNC_VERSION}"
        leader = joined.leader == self.member_id
        assignments = []
        if leader:
            members = sorted(m.member_id for m in joined.members)
            if self.member_id not in members:
                raise FormationError(
                    f"JoinGroup v{JOIN_VERSION} of {self.label} named it leader but listed "
                    f"{len(members)} members without it"
                )
            assignments = [
                SyncGroupRequest.SyncGroupRequestAssignment(
                    member_id=member_id,
                    assignment=encode_assignment(
                        (
                            TopicPartition(TOPIC, p)
                            for p in range(self.partitions)
                            if p % len(members) == rank
                        ),
                        version=0,
                    ),
                )
                for rank, member_id in enumerate(members)
            ]
            await self._order.leader_turn(self.generation, len(members) - 1)
        self._progress.waiting(self.label, f"a {request} response")
        sent = connection.send(
            SyncGroupRequest(
                group_id=self.group,
                generation_id=self.generation,
                member_id=self.member_id,
                group_instance_id=None,
                assignments=assignments,
            ),
            SYNC_VERSION,
        )
        if not leader:
            await self._order.follower_sent(self.generation)
        response = await connection.receive(SyncGroupResponse, SYNC_VERSION, sent)
        code = response.error_code
        if code == NONE:
            return True
        if code in REBALANCE_ERRORS or code in COORDINATOR_RETRIABLE:
            self._retry(request, code)
            self.member_id = "" if code == UNKNOWN_MEMBER_ID else self.member_id
            if code in COORDINATOR_RETRIABLE:
                await asyncio.sleep(RETRY_BACKOFF_S)
            return False
        role = "leader" if leader else "follower"
        raise deviation(
            f"{request} of {self.label} (a {role}, generation {self.generation})",
            code,
            {NONE} | REBALANCE_ERRORS | COORDINATOR_RETRIABLE,
        )
