"""The recording proxy in process: bytes forwarded unchanged, group APIs recorded, broker
addresses rewritten with --advertise-self, undecodable and non-Kafka traffic forwarded and not
recorded."""

from __future__ import annotations

import base64
import logging
import socket
import threading

import pytest
from kafka.protocol.consumer.group import HeartbeatRequest, JoinGroupRequest
from serve_support import Raw, ServerThread, serve_config

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire import codec
from groupspec.wire.address import Address
from groupspec.wire.trace_format import API_NAMES, CLOSE, REQUEST, RESPONSE, TraceHeader, read_trace

LOOPBACK = "127.0.0.1"
FIXED_ADVERTISED_PORT = 19092


def recorder(upstream_port: int, out, *, advertise_self: bool = False) -> RecorderThread:
    config = ProxyConfig(
        Address(LOOPBACK, 0), Address(LOOPBACK, upstream_port), advertise_self=advertise_self
    )
    return RecorderThread(config, out, TraceHeader("test", {"group_min_session_timeout_ms": 1000}))


@pytest.fixture
def server():
    thread = ServerThread(serve_config(topics={"t": 3})).start()
    yield thread
    thread.stop()


def default_requests() -> list[tuple[int, int, object]]:
    """(api key, version, request) for a default request of every API at every version the
    server advertises, as in test_serve_protocol; deterministic answers only (no Produce)."""
    requests = []
    for key, (low, high) in sorted(codec.SUPPORTED_VERSIONS.items()):
        if key in (codec.PRODUCE, codec.INIT_PRODUCER_ID):  # offsets and ids move on
            continue
        request_class = codec.MESSAGES[key][0]
        for version in range(low, high + 1):
            request = request_class(version=version)
            if key == codec.JOIN_GROUP:
                request.rebalance_timeout_ms = 1000
            if key == codec.DESCRIBE_GROUPS:
                request.groups = ["g"]
            requests.append((key, version, request))
    return requests


def exchange(port: int) -> list[bytes]:
    """Send every default request on one connection; the raw response frames, in order."""
    raw = Raw(port)
    frames = []
    for correlation_id, (_, version, request) in enumerate(default_requests(), start=1):
        raw.send(request, version, correlation_id)
        frame = raw.receive()
        assert frame is not None, (correlation_id, type(request).__name__, version)
        frames.append(frame)
    raw.close()
    return frames


def test_every_api_and_version_goes_through_byte_for_byte_and_group_apis_are_recorded(tmp_path):
    # Two identical servers advertising the same port: one spoken to directly, one through
    # the proxy. Every response must be the same bytes.
    config = serve_config(topics={"t": 3}, advertised_port=FIXED_ADVERTISED_PORT)
    direct, behind = ServerThread(config).start(), ServerThread(config).start()
    path = tmp_path / "trace.jsonl"
    try:
        expected = exchange(direct.port)
        with recorder(behind.port, path) as proxy:
            through = exchange(proxy.port)
            counts = proxy.sink.counts
            not_recorded = proxy.sink.not_recorded
    finally:
        direct.stop()
        behind.stop()
    assert through == expected
    group_requests = [(k, v) for k, v, _ in default_requests() if k in API_NAMES]
    assert not not_recorded
    events = list(read_trace(path))
    requests = [(e.api_key, e.api_version) for e in events if e.direction == REQUEST]
    responses = [(e.api_key, e.api_version) for e in events if e.direction == RESPONSE]
    assert requests == responses == group_requests
    assert [e.direction for e in events][-1] == CLOSE
    assert sum(counts.values()) == len(events)
    # Bodies hold the schema's fields at that version, in kafka-python's snake_case names.
    join_v5 = next(e for e in events if e.api == "JoinGroup" and e.api_version == 5)
    assert join_v5.client_id == "raw"
    assert set(join_v5.body) == {
        "group_id",
        "session_timeout_ms",
        "rebalance_timeout_ms",
        "member_id",
        "group_instance_id",
        "protocol_type",
        "protocols",
    }
    describe = [e for e in events if e.api == "DescribeGroups" and e.direction == RESPONSE]
    assert describe[-1].body["groups"][0]["authorized_operations"] == -(2**31)


def test_a_group_run_through_the_proxy_is_recorded_with_its_bodies(server, tmp_path):
    """JoinGroup with MEMBER_ID_REQUIRED, the rejoin, SyncGroup with an assignment, Heartbeat,
    each answered, on one raw connection; bytes fields in base64."""
    path = tmp_path / "trace.jsonl"
    metadata = b"\x00\x00\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x00"
    with recorder(server.port, path) as proxy:
        raw = Raw(proxy.port)
        join = JoinGroupRequest(
            group_id="g",
            session_timeout_ms=6000,
            rebalance_timeout_ms=1000,
            member_id="",
            protocol_type="consumer",
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=metadata)],
        )
        raw.send(join, 5, 1)
        first = codec.decode_response(codec.JOIN_GROUP, 5, raw.receive())
        assert first.error_code == 79  # MEMBER_ID_REQUIRED
        join.member_id = first.member_id
        raw.send(join, 5, 2)
        joined = codec.decode_response(codec.JOIN_GROUP, 5, raw.receive())
        assert joined.error_code == 0
        raw.send(HeartbeatRequest(group_id="g", generation_id=99, member_id=first.member_id), 3, 3)
        raw.receive()
        raw.close()
    events = list(read_trace(path))
    assert [(e.api, e.direction, e.correlation_id) for e in events] == [
        ("JoinGroup", REQUEST, 1),
        ("JoinGroup", RESPONSE, 1),
        ("JoinGroup", REQUEST, 2),
        ("JoinGroup", RESPONSE, 2),
        ("Heartbeat", REQUEST, 3),
        ("Heartbeat", RESPONSE, 3),
        ("", CLOSE, -1),
    ]
    request = events[0].body
    assert base64.b64decode(request["protocols"][0]["metadata"]) == metadata
    assert events[1].body["member_id"] == first.member_id
    leader_view = events[3].body
    assert leader_view["leader"] == first.member_id
    assert base64.b64decode(leader_view["members"][0]["metadata"]) == metadata
    assert events[5].body["error_code"] == 22  # ILLEGAL_GENERATION
    assert len({e.connection for e in events}) == 1
    assert events[0].connection.startswith("127.0.0.1:")


def test_advertise_self_points_metadata_and_find_coordinator_at_the_proxy(server, tmp_path):
    path = tmp_path / "trace.jsonl"
    cases = [(codec.METADATA, version) for version in (0, 1, 9, 12)] + [
        (codec.FIND_COORDINATOR, version) for version in (0, 1, 3, 4)
    ]
    with recorder(server.port, path, advertise_self=True) as proxy:
        direct, through = Raw(server.port), Raw(proxy.port)
        for correlation_id, (key, version) in enumerate(cases, start=1):
            request = codec.MESSAGES[key][0](version=version)
            if key == codec.FIND_COORDINATOR:
                request.key, request.coordinator_keys = "g", ["g"]
            answers = []
            for raw in (direct, through):
                raw.send(request, version, correlation_id)
                answers.append(codec.decode_response(key, version, raw.receive()).to_dict())
            original, rewritten = answers
            addresses = rewritten["brokers"] if key == codec.METADATA else [rewritten]
            if key == codec.FIND_COORDINATOR and version >= 4:
                addresses = rewritten["coordinators"]
            assert [(a["host"], a["port"]) for a in addresses] == [(LOOPBACK, proxy.port)]
            for answer in addresses:
                answer["port"] = server.port
            assert rewritten == original, (key, version)  # nothing else changed
        direct.close()
        through.close()
    # The trace keeps what the broker answered, not the rewritten address.
    found = [
        e.body for e in read_trace(path) if e.api == "FindCoordinator" and e.direction == RESPONSE
    ]
    ports = [
        body["coordinators"][0]["port"] if "coordinators" in body else body["port"]
        for body in found
    ]
    assert ports == [server.port] * 4


def test_an_undecodable_group_frame_is_forwarded_and_not_recorded(server, tmp_path, caplog):
    path = tmp_path / "trace.jsonl"
    garbage = b"\x00\x0b\x00\x05\x00\x00\x00\x07\x00\x01x" + b"\xff" * 9  # JoinGroup v5, id 7
    with (
        caplog.at_level(logging.WARNING, logger="groupspec.record"),
        recorder(server.port, path) as proxy,
    ):
        raw = Raw(proxy.port)
        raw.send_bytes(len(garbage).to_bytes(4, "big") + garbage)
        # The server closes the connection on a body it cannot decode: the frame got there.
        assert raw.closed_by_server()
        raw.close()
        ok = Raw(proxy.port)
        ok.send(HeartbeatRequest(group_id="g", generation_id=1, member_id="m"), 0, 8)
        assert ok.receive() is not None
        ok.close()
        not_recorded = dict(proxy.sink.not_recorded)
    assert not_recorded == {"JoinGroup request": 1}
    assert any("JoinGroup request v5 (correlation id 7)" in r.getMessage() for r in caplog.records)
    events = list(read_trace(path))
    assert {e.api for e in events if e.direction != CLOSE} == {"Heartbeat"}


class BytesUpstream:
    """A TCP peer that is not Kafka: records what it receives, and sends `reply` at once."""

    def __init__(self, reply: bytes) -> None:
        self.sock = socket.create_server((LOOPBACK, 0))
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.reply = reply
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        connection, _ = self.sock.accept()
        with connection:
            connection.sendall(self.reply)
            while chunk := connection.recv(65536):
                self.received += chunk


def test_non_kafka_bytes_are_forwarded_both_ways_and_never_recorded(tmp_path, caplog):
    reply = b"HTTP/1.1 400 Bad Request\r\n\r\n" + bytes(range(256)) * 40
    upstream = BytesUpstream(reply)
    sent = bytes(range(255, -1, -1)) * 300 + b"\x00\x00\x00\x0c\x00\x0c"  # ends inside a frame
    path = tmp_path / "trace.jsonl"
    with (
        caplog.at_level(logging.ERROR, logger="groupspec.record"),
        recorder(upstream.port, path) as proxy,
    ):
        client = socket.create_connection((LOOPBACK, proxy.port), timeout=20)
        for start in range(0, len(sent), 997):  # odd chunks
            client.sendall(sent[start : start + 997])
        received = bytearray()
        while len(received) < len(reply):
            received += client.recv(65536)
        client.shutdown(socket.SHUT_WR)
        upstream.thread.join(20)
        client.close()
    assert bytes(received) == reply
    assert bytes(upstream.received) == sent
    assert "not the Kafka protocol" in caplog.text
    assert list(read_trace(path)) == []


def test_the_bytes_fields_of_every_group_api_are_the_ones_the_trace_format_names():
    from groupspec.wire.trace_body import bytes_field_names
    from groupspec.wire.trace_format import BYTES_FIELDS

    names = set()
    for key in API_NAMES:
        for message_class in codec.MESSAGES[key]:
            names |= bytes_field_names(message_class)
    assert names == set(BYTES_FIELDS)
