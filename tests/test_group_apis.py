"""wire/group_apis.py: each entry's reader reads a trace's JSON body and the wire server's
decoded kafka-python message alike, and reads back what its writer wrote.

For every request type (an example each, below) at every version its API serves: the request
is written as a trace body (`request_body`), read back from that body, and read again from the
kafka-python message a client would send with the same fields (built, encoded, decoded as the
server decodes it); all three must be the same request.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import pytest

from groupspec.vocabulary import requests as rq
from groupspec.wire import codec
from groupspec.wire.group_apis import GROUP_APIS, api_of_request, read_requests, request_body
from groupspec.wire.trace_format import BYTES_FIELDS

HOST = "/10.0.0.7"
CLIENT = "consumer-1"

EXAMPLES: dict[type, rq.Request] = {
    rq.FindCoordinatorRequest: rq.FindCoordinatorRequest("g"),
    rq.JoinGroupRequest: rq.JoinGroupRequest(
        "g",
        "m-1",
        "consumer",
        (rq.JoinGroupProtocol("range", b"\x00\x01sub"), rq.JoinGroupProtocol("roundrobin", b"")),
        10_000,
        30_000,
        group_instance_id="i-1",
        client_id=CLIENT,
        client_host=HOST,
        reason="rejoining",
    ),
    rq.SyncGroupRequest: rq.SyncGroupRequest(
        "g",
        3,
        "m-1",
        group_instance_id="i-1",
        protocol_type="consumer",
        protocol_name="range",
        assignments=(rq.SyncGroupAssignment("m-1", b"\x01a"), rq.SyncGroupAssignment("m-2", b"")),
    ),
    rq.HeartbeatRequest: rq.HeartbeatRequest("g", 3, "m-1", "i-1"),
    rq.LeaveGroupRequest: rq.LeaveGroupRequest(
        "g", (rq.MemberIdentity("m-1", "i-1", "bye"), rq.MemberIdentity("m-2"))
    ),
    rq.OffsetCommitRequest: rq.OffsetCommitRequest(
        "g",
        (
            rq.OffsetCommitPartition("t", 0, 42, 5, "meta"),
            rq.OffsetCommitPartition("t", 1, 7, 5, None),
            rq.OffsetCommitPartition("u", 0, 1, 5, ""),
        ),
        generation_id=3,
        member_id="m-1",
        group_instance_id="i-1",
    ),
    rq.OffsetFetchRequest: rq.OffsetFetchRequest(
        "g", (rq.TopicPartition("t", 0), rq.TopicPartition("t", 1)), require_stable=True
    ),
    rq.DescribeGroupsRequest: rq.DescribeGroupsRequest(("g", "h")),
    rq.ListGroupsRequest: rq.ListGroupsRequest(("Stable",)),
    rq.DeleteGroupsRequest: rq.DeleteGroupsRequest(("g", "h")),
}


def test_every_request_type_has_an_example():
    assert set(EXAMPLES) == set(rq.REQUEST_TYPES)


def at_version(request: rq.Request, version: int) -> rq.Request:
    """The example as a client speaking `version` can send it (fields it lacks dropped)."""
    changes: dict[str, Any] = {"api_version": version}
    if isinstance(request, rq.JoinGroupRequest):
        changes["rebalance_timeout_ms"] = request.rebalance_timeout_ms if version >= 1 else -1
        changes["group_instance_id"] = request.group_instance_id if version >= 5 else None
        changes["reason"] = request.reason if version >= 8 else None
    if isinstance(request, rq.SyncGroupRequest | rq.HeartbeatRequest):
        changes["group_instance_id"] = request.group_instance_id if version >= 3 else None
    if isinstance(request, rq.SyncGroupRequest) and version < 5:
        changes["protocol_type"] = changes["protocol_name"] = None
    if isinstance(request, rq.LeaveGroupRequest):
        members = request.members[:1] if version < 3 else request.members
        changes["members"] = tuple(
            dataclasses.replace(
                m,
                group_instance_id=m.group_instance_id if version >= 3 else None,
                reason=m.reason if version >= 5 else None,
            )
            for m in members
        )
    if isinstance(request, rq.OffsetCommitRequest):
        changes["group_instance_id"] = request.group_instance_id if version >= 7 else None
        changes["partitions"] = tuple(
            dataclasses.replace(
                p, committed_leader_epoch=p.committed_leader_epoch if version >= 6 else -1
            )
            for p in request.partitions
        )
    if isinstance(request, rq.OffsetFetchRequest):
        changes["require_stable"] = request.require_stable if version >= 7 else False
    if isinstance(request, rq.ListGroupsRequest):
        changes["states_filter"] = request.states_filter if version >= 4 else ()
    return dataclasses.replace(request, **changes)


def raw_bytes(value: Any, name: str = "") -> Any:
    """A trace body's fields with its `bytes` fields decoded (what a client puts in a frame)."""
    if isinstance(value, dict):
        return {key: raw_bytes(item, key) for key, item in value.items()}
    if isinstance(value, list):
        return [raw_bytes(item, name) for item in value]
    if name in BYTES_FIELDS and isinstance(value, str):
        return base64.b64decode(value)
    return value


CASES = [
    (request_type, version)
    for request_type in rq.REQUEST_TYPES
    for version in range(
        api_of_request(request_type).versions[0], api_of_request(request_type).versions[1] + 1
    )
]


@pytest.mark.parametrize(
    ("request_type", "version"), CASES, ids=lambda c: getattr(c, "__name__", str(c))
)
def test_a_request_reads_back_from_its_trace_body_and_from_its_frame(request_type, version):
    request = at_version(EXAMPLES[request_type], version)
    api = api_of_request(request_type)
    key, body = request_body(request)
    assert key == api.key
    from_trace = read_requests(key, version, body, CLIENT, HOST)

    message = codec.build(api.request_class, raw_bytes(body), version)
    message.with_header(correlation_id=7, client_id=CLIENT)
    frame = bytes(message.encode(header=True))
    decoded = codec.decode_request(frame, codec.peek_head(frame))
    codec.refuse_null_fields(decoded)
    from_frame = read_requests(key, version, decoded.body, decoded.client_id, HOST)

    expected = request
    if isinstance(request, rq.JoinGroupRequest):
        expected = dataclasses.replace(request, client_id=CLIENT, client_host=HOST)
    assert from_trace == (expected,)
    assert from_frame == (expected,)


def test_every_entry_serves_a_contiguous_range_its_classes_know():
    for api in GROUP_APIS:
        low, high = api.versions
        assert api.request_class.min_version <= low <= high <= api.request_class.max_version
