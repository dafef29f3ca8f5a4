"""The broker-wide steps before a group forms, as a Kafka consumer takes them: a connection
whose ApiVersions was answered, the versions the load needs, the bench's topic (Metadata, else
CreateTopics), each group's coordinator (FindCoordinator). Each answer is judged as in
`load_protocol`."""

from __future__ import annotations

import asyncio

from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

from groupspec.wire.address import Address
from groupspec.wire.request_connection import RequestConnection

from .formation_progress import SETUP, FormationProgress
from .load_protocol import (
    API_KEYS,
    API_VERSIONS_VERSION,
    CLIENT_ID,
    COORDINATOR_RETRIABLE,
    CREATE_TOPICS_KEY,
    CREATE_TOPICS_VERSION,
    FIND_COORDINATOR_VERSION,
    LEADER_NOT_AVAILABLE,
    METADATA_VERSION,
    NONE,
    RETRY_BACKOFF_S,
    TOPIC,
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_OR_PARTITION,
    FormationError,
    deviation,
    error_name,
)

# A Kafka client's socket.connection.setup.timeout.ms (librdkafka's and Java's default).
CONNECTION_SETUP_TIMEOUT_S = 10.0


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


def check_versions(
    address: Address,
    served: dict[int, tuple[int, int]],
    used: dict[str, tuple[int, int]] = API_KEYS,
) -> bool:
    """FormationError if a version the load uses (`used`: name -> API key and version) is not
    `served`; whether the broker serves CreateTopics at the version the load would use."""
    for name, (key, version) in used.items():
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


async def set_up(
    address: Address,
    groups: list[str],
    members: int,
    progress: FormationProgress,
    used: dict[str, tuple[int, int]] = API_KEYS,
) -> tuple[dict[int, tuple[int, int]], int, dict[str, Address]]:
    """The broker-wide steps (see the module) with the versions in `used` checked: the versions
    the broker serves, the bench topic's partition count and each group's coordinator."""
    bootstrap, served = await connect(address, SETUP, progress)
    try:
        can_create = check_versions(address, served, used)
        partitions = await ensure_topic(bootstrap, members, can_create, progress)
        coordinators = {g: await find_coordinator(bootstrap, g, progress) for g in groups}
    finally:
        bootstrap.close()
    progress.done(SETUP)
    return served, partitions, coordinators
