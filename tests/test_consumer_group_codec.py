"""KIP-848's two APIs on the wire: ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

The expected bytes are written here by hand from Kafka's message schemas
(`clients/src/main/resources/common/message/ConsumerGroup{Heartbeat,Describe}{Request,Response}
.json`, Kafka 4.4.0): both APIs are flexible from v0, so strings and arrays are compact (length
+ 1 as an unsigned varint, 0 for null), a nullable struct starts with an int8 (-1 null, 1
present), and every struct ends with its tagged fields (a varint count). The codec must produce
exactly these bytes and read them back, and the trace body must read back to the vocabulary's
request, at v0 and v1.
"""

from __future__ import annotations

import struct
import uuid

import pytest

from groupspec.vocabulary import consumer_groups as cg
from groupspec.vocabulary.errors import ErrorCode
from groupspec.wire import codec, group_apis, trace_format
from groupspec.wire.codec import RequestHead
from groupspec.wire.group_apis import (
    CONSUMER_GROUP_DESCRIBE,
    CONSUMER_GROUP_HEARTBEAT,
    as_is,
    read_consumer_requests,
    request_body,
    response_body,
)
from groupspec.wire.trace_body import body_of

TOPIC = uuid.UUID("6a1c0b4e-2f0d-4c4b-9a55-0f3e2d1c0b0a")
# KIP-1082: on v1 the client generates its member id (a UUID's text) before it joins.
CLIENT_MEMBER_ID = "Yx3kq2nJTQ6oKqGZ3uS9pQ"


def uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def compact_string(value: str | None) -> bytes:
    if value is None:
        return uvarint(0)
    data = value.encode("utf-8")
    return uvarint(len(data) + 1) + data


def compact_array(items: list[bytes] | None) -> bytes:
    if items is None:
        return uvarint(0)
    return uvarint(len(items) + 1) + b"".join(items)


def int8(v: int) -> bytes:
    return struct.pack(">b", v)


def int16(v: int) -> bytes:
    return struct.pack(">h", v)


def int32(v: int) -> bytes:
    return struct.pack(">i", v)


NO_TAGS = uvarint(0)


def heartbeat_request_bytes(version: int, member_id: str, epoch: int, regex: str | None) -> bytes:
    owned = TOPIC.bytes + compact_array([int32(0), int32(2)]) + NO_TAGS
    return (
        compact_string("group-a")
        + compact_string(member_id)
        + int32(epoch)
        + compact_string("instance-1")
        + compact_string(None)  # rack id
        + int32(300_000)
        + compact_array([compact_string("orders")])
        + (compact_string(regex) if version >= 1 else b"")
        + compact_string("uniform")
        + compact_array([owned])
        + NO_TAGS
    )


def heartbeat_request(version: int, member_id: str, regex: str | None):
    return cg.ConsumerGroupHeartbeatRequest(
        group_id="group-a",
        member_id=member_id,
        member_epoch=0,
        instance_id="instance-1",
        rebalance_timeout_ms=300_000,
        subscribed_topic_names=("orders",),
        subscribed_topic_regex=regex,
        server_assignor="uniform",
        topic_partitions=(cg.ConsumerGroupTopicPartitions(str(TOPIC), (0, 2)),),
        api_version=version,
    )


def request_header(api_key: int, version: int, correlation_id: int) -> bytes:
    # Request header v2 (flexible): key, version, correlation id, client id (a nullable
    # int16-length string even here), tagged fields.
    client = b"client-1"
    return (
        int16(api_key)
        + int16(version)
        + int32(correlation_id)
        + int16(len(client))
        + client
        + NO_TAGS
    )


CASES = [
    # v0: the coordinator generates the member id, the client joins with "".
    (0, "", None),
    # v1: the client's own member id at epoch 0, and a regular expression.
    (1, CLIENT_MEMBER_ID, "orders-.*"),
]


@pytest.mark.parametrize(("version", "member_id", "regex"), CASES)
def test_a_heartbeat_request_frame_is_kafkas_bytes_and_reads_back(version, member_id, regex):
    expected = heartbeat_request_bytes(version, member_id, 0, regex)
    request = heartbeat_request(version, member_id, regex)
    key, body = request_body(request)
    assert key == CONSUMER_GROUP_HEARTBEAT
    message = codec.build(codec.MESSAGES[key][0], body, version)
    assert bytes(message.encode(header=False)) == expected
    frame = request_header(key, version, 7) + expected
    decoded = codec.decode_request(frame, codec.peek_head(frame))
    assert decoded.client_id == "client-1"
    codec.refuse_null_fields(decoded)
    # The decoded message and its trace body both read back to the vocabulary's request.
    assert read_consumer_requests(key, version, decoded.body, "client-1", "/h") == (request,)
    traced = body_of(decoded.body)
    assert traced["topic_partitions"][0]["topic_id"] == str(TOPIC)
    assert read_consumer_requests(key, version, traced, "client-1", "/h") == (request,)


def test_v0_has_no_regex_field_on_the_wire():
    v0 = heartbeat_request_bytes(0, "", 0, None)
    v1 = heartbeat_request_bytes(1, "", 0, None)
    assert len(v1) == len(v0) + 1  # the null compact string of SubscribedTopicRegex
    with pytest.raises(Exception, match="v1"):
        cg.ConsumerGroupHeartbeatRequest("g", "", 0, subscribed_topic_regex="x", api_version=0)


def test_an_unknown_tagged_field_is_skipped():
    # A newer client may add tagged fields: a tag 9 of three bytes at the end of the request.
    plain = heartbeat_request_bytes(1, CLIENT_MEMBER_ID, 0, None)
    tagged = plain[:-1] + uvarint(1) + uvarint(9) + uvarint(3) + b"xyz"
    frame = request_header(CONSUMER_GROUP_HEARTBEAT, 1, 8) + tagged
    decoded = codec.decode_request(frame, codec.peek_head(frame))
    (request,) = read_consumer_requests(CONSUMER_GROUP_HEARTBEAT, 1, decoded.body, "c", "/h")
    assert request == heartbeat_request(1, CLIENT_MEMBER_ID, None)


def test_a_steady_heartbeat_sends_nulls_for_what_did_not_change():
    expected = (
        compact_string("group-a")
        + compact_string(CLIENT_MEMBER_ID)
        + int32(5)
        + compact_string(None)
        + compact_string(None)
        + int32(-1)
        + compact_array(None)
        + compact_string(None)
        + compact_string(None)
        + compact_array(None)
        + NO_TAGS
    )
    request = cg.ConsumerGroupHeartbeatRequest("group-a", CLIENT_MEMBER_ID, 5)
    key, body = request_body(request)
    message = codec.build(codec.MESSAGES[key][0], body, 1)
    assert bytes(message.encode(header=False)) == expected
    decoded = codec.MESSAGES[key][0].decode(expected, version=1)
    assert read_consumer_requests(key, 1, body_of(decoded), "", "/h") == (request,)


def heartbeat_response_bytes(assignment: bool) -> bytes:
    if assignment:
        topic = TOPIC.bytes + compact_array([int32(1)]) + NO_TAGS
        assigned = int8(1) + compact_array([topic]) + NO_TAGS
    else:
        assigned = int8(-1)
    return (
        int32(0)
        + int16(0)
        + compact_string(None)
        + compact_string(CLIENT_MEMBER_ID)
        + int32(3)
        + int32(5000)
        + assigned
        + NO_TAGS
    )


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("assignment", [True, False])
def test_a_heartbeat_response_is_kafkas_bytes_and_reads_back(version, assignment):
    answer = cg.ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE,
        CLIENT_MEMBER_ID,
        3,
        5000,
        cg.ConsumerGroupHeartbeatAssignment((cg.ConsumerGroupTopicPartitions(str(TOPIC), (1,)),))
        if assignment
        else None,
    )
    fields = response_body((answer,), version, raw=as_is)
    frame = codec.encode_response(CONSUMER_GROUP_HEARTBEAT, version, 11, fields)
    # Response header v1 (flexible): correlation id, tagged fields; the frame is length-prefixed.
    assert frame[4:] == int32(11) + NO_TAGS + heartbeat_response_bytes(assignment)
    decoded = codec.decode_response(CONSUMER_GROUP_HEARTBEAT, version, frame[4:])
    assert body_of(decoded) == response_body((answer,), version)


def describe_response_bytes(version: int) -> bytes:
    def assignment(parts: list[int]) -> bytes:
        topic = TOPIC.bytes + compact_string("orders") + compact_array([int32(p) for p in parts])
        return compact_array([topic + NO_TAGS]) + NO_TAGS

    member = (
        compact_string(CLIENT_MEMBER_ID)
        + compact_string(None)
        + compact_string("rack-a")
        + int32(4)
        + compact_string("client-1")
        + compact_string("/10.0.0.1")
        + compact_array([compact_string("orders")])
        + compact_string(None)
        + assignment([0])
        + assignment([0, 1])
        + (int8(1) if version >= 1 else b"")
        + NO_TAGS
    )
    group = (
        int16(0)
        + compact_string(None)
        + compact_string("group-a")
        + compact_string("Reconciling")
        + int32(4)
        + int32(4)
        + compact_string("uniform")
        + compact_array([member])
        + int32(-(2**31))
        + NO_TAGS
    )
    missing = (
        int16(int(ErrorCode.GROUP_ID_NOT_FOUND))
        + compact_string(None)
        + compact_string("nope")
        + compact_string("")
        + int32(0)
        + int32(0)
        + compact_string("")
        + compact_array([])
        + int32(-(2**31))
        + NO_TAGS
    )
    return int32(0) + compact_array([group, missing]) + NO_TAGS


@pytest.mark.parametrize("version", [0, 1])
def test_a_describe_round_trips_at_each_version(version):
    request = cg.ConsumerGroupDescribeRequest(("group-a", "nope"), api_version=version)
    key, body = request_body(request)
    assert key == CONSUMER_GROUP_DESCRIBE
    expected_request = (
        compact_array([compact_string("group-a"), compact_string("nope")]) + b"\x00" + NO_TAGS
    )
    message = codec.build(codec.MESSAGES[key][0], body, version)
    assert bytes(message.encode(header=False)) == expected_request
    assert read_consumer_requests(key, version, body_of(message), "", "/h") == (request,)

    def parts(ps: tuple[int, ...]) -> tuple[cg.ConsumerGroupTopicPartitions, ...]:
        return (cg.ConsumerGroupTopicPartitions(str(TOPIC), ps),)

    member = cg.DescribedConsumerGroupMember(
        CLIENT_MEMBER_ID,
        None,
        "rack-a",
        4,
        "client-1",
        "/10.0.0.1",
        ("orders",),
        None,
        parts((0,)),
        parts((0, 1)),
    )
    answer = cg.ConsumerGroupDescribeResponse(
        (
            cg.DescribedConsumerGroup(
                ErrorCode.NONE, "group-a", "Reconciling", 4, 4, "uniform", (member,)
            ),
            cg.DescribedConsumerGroup(ErrorCode.GROUP_ID_NOT_FOUND, "nope"),
        )
    )
    fields = response_body((answer,), version, raw=as_is)
    # The vocabulary keeps topics by id; Kafka's answer names them too.
    for g in fields["groups"]:
        for m in g["members"]:
            for which in ("assignment", "target_assignment"):
                for tp in m[which]["topic_partitions"]:
                    tp["topic_name"] = "orders"
    frame = codec.encode_response(key, version, 12, fields)
    assert frame[4:] == int32(12) + NO_TAGS + describe_response_bytes(version)
    decoded = body_of(codec.decode_response(key, version, frame[4:]))
    assert decoded["groups"][0]["members"][0].get("member_type") == (1 if version >= 1 else None)


def test_the_trace_format_carries_both_apis_and_serve_advertises_them():
    assert trace_format.API_NAMES[68] == "ConsumerGroupHeartbeat"
    assert trace_format.API_NAMES[69] == "ConsumerGroupDescribe"
    # groupspec serve serves both (impl/server/consumer_groups.py).
    assert codec.is_supported(RequestHead(68, 1, 0)) is True
    assert codec.is_supported(RequestHead(69, 1, 0)) is True
    assert codec.is_supported(RequestHead(68, 2, 0)) is False
    # The classic oracle's reader skips them as unmodelled.
    with pytest.raises(group_apis.UnmodelledRequest):
        group_apis.read_requests(68, 1, {}, "", "/h")


def test_the_recorder_records_a_heartbeat_exchange(tmp_path):
    import io

    from groupspec.record.recording import ConnectionRecorder, TraceSink
    from groupspec.wire.trace_format import TraceHeader, TraceWriter, read_trace

    out = io.StringIO()
    clock = iter(float(t) for t in range(100, 200))
    sink = TraceSink(TraceWriter(out, TraceHeader("test")), clock=lambda: next(clock))
    recorder = ConnectionRecorder("127.0.0.1:5000", sink)
    body = heartbeat_request_bytes(1, CLIENT_MEMBER_ID, 0, None)
    recorder.on_request(request_header(CONSUMER_GROUP_HEARTBEAT, 1, 21) + body)
    answer = cg.ConsumerGroupHeartbeatResponse(ErrorCode.NONE, CLIENT_MEMBER_ID, 1, 5000, None)
    frame = codec.encode_response(
        CONSUMER_GROUP_HEARTBEAT, 1, 21, response_body((answer,), 1, raw=as_is)
    )
    assert recorder.on_response(frame[4:]) is not None
    recorder.on_close()
    path = tmp_path / "t.jsonl"
    path.write_text(out.getvalue())
    events = list(read_trace(path))
    assert [(e.api, e.direction) for e in events] == [
        ("ConsumerGroupHeartbeat", "request"),
        ("ConsumerGroupHeartbeat", "response"),
        ("", "close"),
    ]
    (request,) = read_consumer_requests(68, 1, events[0].body, "client-1", "/127.0.0.1")
    assert request == heartbeat_request(1, CLIENT_MEMBER_ID, None)
    assert events[1].body == response_body((answer,), 1)


def test_the_consumer_protocol_probes_name_kafkas_error_codes():
    # record/ may not import the vocabulary; the probes keep the codes they expect.
    from groupspec.record.workload.probes_consumer import ErrorCode as ProbeErrorCode

    for code in ProbeErrorCode:
        assert ErrorCode[code.name] == code.value
