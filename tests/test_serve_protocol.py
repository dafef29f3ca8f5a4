"""The wire server on raw sockets: version negotiation, request order, hostile frames, fuzz."""

from __future__ import annotations

import logging
import random
import socket
import struct

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.protocol.consumer.fetch import FetchRequest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from kafka.protocol.consumer.group import JoinGroupResponse as JoinGroupResponseMessage
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse
from serve_support import Raw, ServerThread, join_request, serve_config

from groupspec.wire import codec

MAX_FRAME = 1 << 20


@pytest.fixture
def server():
    thread = ServerThread(serve_config(topics={"t": 6}, max_frame_bytes=MAX_FRAME)).start()
    yield thread
    thread.stop()


@pytest.fixture
def quiet_server(server, caplog):
    """The server, failing the test if it logs a warning or worse (an internal error)."""
    with caplog.at_level(logging.DEBUG, logger="groupspec.serve"):
        yield server
    # In teardown, caplog.records holds only teardown's records: ask for the test's own.
    records = caplog.get_records("setup") + caplog.get_records("call")
    bad = [r for r in records if r.name == "groupspec.serve" and r.levelno >= logging.WARNING]
    assert not bad, [r.getMessage() for r in bad]


def api_versions(raw: Raw, version: int, correlation_id: int = 1):
    raw.send(
        ApiVersionsRequest(client_software_name="raw", client_software_version="1"),
        version,
        correlation_id,
    )
    frame = raw.receive()
    assert frame is not None
    return frame


def test_api_versions_lists_every_api(server):
    raw = Raw(server.port)
    for version in (0, 1, 2, 3):
        frame = api_versions(raw, version, correlation_id=10 + version)
        response = ApiVersionsResponse.decode(frame, version=version, header=True)
        assert response.header.correlation_id == 10 + version
        assert response.error_code == 0
        ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        assert ranges == codec.SUPPORTED_VERSIONS
    raw.close()


def test_unsupported_api_versions_version_gets_the_v0_error_answer(server):
    raw = Raw(server.port)
    frame = api_versions(raw, 4, correlation_id=77)
    # Answered in the v0 format whatever was asked, as Kafka does.
    response = ApiVersionsResponse.decode(frame, version=0, header=True)
    assert response.header.correlation_id == 77
    assert response.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 3)]
    # The connection stays usable: the client retries at a version it now knows.
    frame = api_versions(raw, 3, correlation_id=78)
    assert ApiVersionsResponse.decode(frame, version=3, header=True).error_code == 0
    raw.close()


def test_every_client_in_the_reference_table_fits_the_advertised_ranges():
    # (client minimum, client maximum) per API from shared/reference/wire-and-clients.md.
    clients = {
        "aiokafka": {
            3: (0, 5),
            10: (0, 1),
            11: (0, 5),
            14: (0, 3),
            12: (0, 1),
            13: (0, 1),
            8: (2, 3),
            9: (1, 3),
            2: (0, 3),
            1: (1, 11),
        },
        "kcat": {
            3: (0, 4),
            10: (0, 2),
            11: (0, 5),
            14: (0, 3),
            12: (0, 3),
            13: (0, 1),
            8: (0, 7),
            9: (0, 7),
            2: (0, 2),
            1: (0, 11),
        },
        "librdkafka": {
            3: (0, 13),
            10: (0, 2),
            11: (0, 5),
            14: (0, 3),
            12: (0, 3),
            13: (0, 1),
            8: (0, 9),
            9: (0, 9),
            2: (0, 7),
            1: (0, 12),
        },
        "kafka-python": {
            3: (0, 13),
            10: (0, 6),
            11: (0, 7),
            14: (0, 5),
            12: (0, 4),
            13: (0, 5),
            8: (0, 8),
            9: (0, 8),
            2: (0, 11),
            1: (0, 12),
        },
    }
    for client, apis in clients.items():
        for key, (low, high) in apis.items():
            served_low, served_high = codec.SUPPORTED_VERSIONS[key]
            assert max(low, served_low) <= min(high, served_high), (client, key)


def test_responses_keep_request_order_behind_a_parked_join(server):
    raw = Raw(server.port)
    # v3: no MEMBER_ID_REQUIRED round trip, the join parks for the initial rebalance delay.
    raw.send(join_request("ordered"), 3, correlation_id=1)
    raw.send(MetadataRequest(topics=None, allow_auto_topic_creation=False), 1, correlation_id=2)
    first = raw.receive()
    second = raw.receive()
    join = JoinGroupResponseMessage.decode(first, version=3, header=True)
    assert join.header.correlation_id == 1 and join.error_code == 0
    metadata = MetadataResponse.decode(second, version=1, header=True)
    assert metadata.header.correlation_id == 2
    assert [t.name for t in metadata.topics] == ["t"]
    raw.close()


def test_an_empty_group_id_gets_invalid_group_id(server):
    raw = Raw(server.port)
    raw.send(join_request(""), 5, correlation_id=3)
    join = JoinGroupResponseMessage.decode(raw.receive(), version=5, header=True)
    assert join.error_code == 24
    raw.send(
        HeartbeatRequest(group_id="", generation_id=1, member_id="m", group_instance_id=None), 3, 4
    )
    assert HeartbeatResponse.decode(raw.receive(), version=3, header=True).error_code == 24
    raw.close()


@pytest.mark.parametrize(
    "frame",
    [
        struct.pack(">i", 2**31 - 1) + b"\x00\x03\x00\x01",  # a 2 GiB length prefix
        struct.pack(">i", -5),  # a negative length
        struct.pack(">i", MAX_FRAME + 1) + b"\x00" * 64,  # just over the maximum frame size
        struct.pack(">i", 3) + b"abc",  # too short for a header
        struct.pack(">ihhi", 8, 999, 0, 1),  # an unknown api key
        struct.pack(">ihhi", 8, 11, 42, 1),  # JoinGroup v42
        struct.pack(">ihhih", 20, 11, 5, 1, 200) + b"\xff" * 10,  # a client id past the frame
    ],
    ids=["2GiB", "negative", "over-max", "short", "unknown-api", "bad-version", "garbage-body"],
)
def test_a_bad_frame_closes_only_its_connection(quiet_server, frame):
    bystander = Raw(quiet_server.port)
    api_versions(bystander, 3)
    raw = Raw(quiet_server.port)
    raw.send_bytes(frame)
    assert raw.closed_by_server()
    raw.close()
    frame = api_versions(bystander, 3, correlation_id=9)
    assert ApiVersionsResponse.decode(frame, version=3, header=True).error_code == 0
    bystander.close()


def null_topics_fetch() -> FetchRequest:
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=None,
        forgotten_topics_data=[],
        rack_id="",
    )


def null_protocols_join() -> JoinGroupRequest:
    request = join_request("g")
    request.protocols = None
    return request


def null_group_id_heartbeat() -> HeartbeatRequest:
    return HeartbeatRequest(group_id=None, generation_id=1, member_id="m", group_instance_id=None)


@pytest.mark.parametrize(
    ("build", "version"),
    [
        (null_topics_fetch, 4),
        (null_topics_fetch, 12),
        (null_protocols_join, 5),
        (null_group_id_heartbeat, 3),
    ],
    ids=["fetch-v4-topics", "fetch-v12-topics", "join-protocols", "heartbeat-group-id"],
)
def test_a_null_the_schema_does_not_allow_closes_the_connection_as_kafka_does(
    quiet_server, caplog, build, version
):
    """Kafka's parser refuses such a frame and closes the connection, with no answer
    (docs/serve.md); so does this broker, as a bad frame and not an internal error (the
    quiet_server fixture fails on any warning)."""
    bystander = Raw(quiet_server.port)
    raw = Raw(quiet_server.port)
    raw.send(build(), version, correlation_id=5)
    assert raw.closed_by_server()
    raw.close()
    assert any("was serialized as null" in r.getMessage() for r in caplog.records)
    frame = api_versions(bystander, 3, correlation_id=9)
    assert ApiVersionsResponse.decode(frame, version=3, header=True).error_code == 0
    bystander.close()


def test_a_null_the_schema_allows_is_answered(quiet_server):
    raw = Raw(quiet_server.port)
    # OffsetFetch v2+ topics may be null: every committed offset of the group.
    raw.send(
        OffsetFetchRequest(group_id="g", topics=None, require_stable=False), 7, correlation_id=3
    )
    response = OffsetFetchResponse.decode(raw.receive(), version=7, header=True)
    assert response.error_code == 0 and response.topics == []
    raw.close()


def test_a_truncated_frame_then_eof_is_harmless(quiet_server):
    raw = Raw(quiet_server.port)
    raw.send_bytes(struct.pack(">i", 100) + b"\x00\x12\x00\x03")
    raw.sock.shutdown(socket.SHUT_WR)
    assert raw.closed_by_server()
    raw.close()
    other = Raw(quiet_server.port)
    api_versions(other, 0)
    other.close()


def valid_frames(rng: random.Random) -> list[bytes]:
    """Well-formed requests of several APIs, the seeds the fuzzer mutates."""
    frames = []
    samples = [
        (ApiVersionsRequest(client_software_name="f", client_software_version="1"), 3),
        (MetadataRequest(topics=None, allow_auto_topic_creation=False), 4),
        (join_request(f"fuzz-{rng.randrange(5)}"), 5),
        (join_request(f"fuzz-{rng.randrange(5)}"), 7),
        (
            HeartbeatRequest(
                group_id="fuzz-1", generation_id=1, member_id="m", group_instance_id=None
            ),
            4,
        ),
    ]
    for message, version in samples:
        message.with_header(correlation_id=rng.randrange(2**31), client_id="fuzz")
        frames.append(bytes(message.encode(version=version, header=True, framed=True)))
    return frames


def hostile_frame(rng: random.Random, seeds: list[bytes]) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if kind == 1:  # a valid header for a served API, then random bytes
        key = rng.choice(sorted(codec.SUPPORTED_VERSIONS))
        low, high = codec.SUPPORTED_VERSIONS[key]
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 80)))
        head = struct.pack(">hhi", key, rng.randint(low, high), rng.randrange(2**31))
        return struct.pack(">i", len(head) + len(body)) + head + body
    if kind == 2:  # a valid request with flipped bytes (after the length prefix)
        frame = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            index = rng.randrange(4, len(frame))
            frame[index] = rng.randrange(256)
        return bytes(frame)
    if kind == 3:  # a valid request cut short, its length prefix intact
        frame = rng.choice(seeds)
        return frame[: rng.randrange(4, len(frame))]
    if kind == 4:  # a huge or negative length prefix
        return struct.pack(">i", rng.choice([2**31 - 1, -1, MAX_FRAME + rng.randrange(1, 99)]))
    frame = rng.choice(seeds)  # a valid request (keeps some connections alive for a while)
    return frame


def test_fuzz_thousands_of_hostile_frames_then_real_clients_still_work(quiet_server, caplog):
    rng = random.Random(20261122)
    seeds = valid_frames(rng)
    bystander = Raw(quiet_server.port)
    raw = Raw(quiet_server.port)
    connections = 1
    for index in range(3000):
        try:
            raw.send_bytes(hostile_frame(rng, seeds))
        except OSError:
            raw.close()
            raw = Raw(quiet_server.port)
            connections += 1
        if index % 7 == 0:  # start afresh often, so frames meet fresh connections
            raw.close()
            raw = Raw(quiet_server.port)
            connections += 1
        if index % 500 == 0:
            frame = api_versions(bystander, 3, correlation_id=index)
            assert ApiVersionsResponse.decode(frame, version=3, header=True).error_code == 0
    raw.close()
    assert connections > 400
    # The frames reached the server and were turned away, one connection at a time.
    closes = [r for r in caplog.get_records("call") if ": closing: " in r.getMessage()]
    assert len(closes) > 300
    assert quiet_server.call(lambda s: s.port) == quiet_server.port

    # A well-behaved client still works: produce, consume in a group, commit.
    bootstrap = quiet_server.bootstrap
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(12):
        producer.send("t", value=f"after-fuzz-{i}".encode(), partition=i % 6)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(
        "t",
        bootstrap_servers=bootstrap,
        group_id="after-fuzz",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        consumer_timeout_ms=20000,
    )
    seen = set()
    for record in consumer:
        seen.add(record.value)
        if len(seen) == 12:
            break
    consumer.commit()
    consumer.close()
    assert len(seen) == 12
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    offsets = admin.list_group_offsets("after-fuzz")["after-fuzz"]
    admin.close()
    assert sum(meta.offset for meta in offsets.values()) == 12
    bystander.close()


def test_every_api_at_every_advertised_version_answers_a_default_request(quiet_server):
    """Default-valued requests (empty group ids, no topics) of every API and version get a
    response that decodes at that version, on one connection, in order."""
    raw = Raw(quiet_server.port)
    correlation_id = 0
    for key, (low, high) in sorted(codec.SUPPORTED_VERSIONS.items()):
        request_class, response_class = codec.MESSAGES[key]
        for version in range(low, high + 1):
            correlation_id += 1
            request = request_class(version=version)
            if key == codec.PRODUCE:
                request.acks = 1
            if key == codec.JOIN_GROUP:
                # A negative rebalance timeout is refused by closing the connection (tested
                # above); here every request must be answered.
                request.rebalance_timeout_ms = 1000
            raw.send(request, version, correlation_id)
            frame = raw.receive()
            assert frame is not None, (key, version)
            response = response_class.decode(frame, version=version, header=True)
            assert response.header.correlation_id == correlation_id, (key, version)
    raw.close()


def test_the_wire_package_never_imports_the_spec_and_the_core_never_imports_the_wire():
    import ast
    from pathlib import Path

    impl_dir = Path(codec.__file__).resolve().parent.parent
    for path in sorted((impl_dir / "wire").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = "." * node.level + node.module
                assert "spec" not in name.split(".") and "checker" not in name, (path.name, name)
                assert node.level <= 2, (path.name, name)
    for path in sorted(impl_dir.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert "wire" not in node.module.split("."), path.name
