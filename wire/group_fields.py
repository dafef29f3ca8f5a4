"""Group-API responses as Kafka's message fields (nested dicts, the schema's snake_case names).

The wire server encodes these dicts into frames; the oracle compares them with what a traced
coordinator sent. Both the implementation's and the specification's response classes have the
same field names, so one builder reads either. `raw` says how `bytes` fields are spelled: as
bytes for a frame, as base64 text for a trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Fields = dict[str, Any]
Raw = Callable[[bytes], Any]


def _same(data: bytes) -> bytes:
    return data


def join_fields(response: Any, version: int, raw: Raw = _same) -> Fields:
    """A JoinGroupResponse."""
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "generation_id": response.generation_id,
        "protocol_type": response.protocol_type,
        # Before v7 the protocol name is not nullable.
        "protocol_name": response.protocol_name if version >= 7 else response.protocol_name or "",
        "leader": response.leader,
        "skip_assignment": response.skip_assignment,
        "member_id": response.member_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "metadata": raw(m.metadata),
            }
            for m in response.members
        ],
    }


def sync_fields(response: Any, raw: Raw = _same) -> Fields:
    """A SyncGroupResponse."""
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "protocol_type": response.protocol_type,
        "protocol_name": response.protocol_name,
        "assignment": raw(response.assignment),
    }


def leave_fields(response: Any) -> Fields:
    """A LeaveGroupResponse (v3+ lists the members; older versions drop the list)."""
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "error_code": int(m.error_code),
            }
            for m in response.members
        ],
    }


def commit_fields(response: Any) -> Fields:
    """An OffsetCommitResponse: the partitions' errors, grouped by topic."""
    by_topic: dict[str, list[Fields]] = {}
    for p in response.partitions:
        by_topic.setdefault(p.topic, []).append(
            {"partition_index": p.partition, "error_code": int(p.error_code)}
        )
    return {"throttle_time_ms": 0, "topics": _topics(by_topic.items())}


def fetch_fields(response: Any, version: int) -> Fields:
    """An OffsetFetchResponse for one group (v1–v7 shape; v8+ nests this in `groups`)."""
    error = int(response.error_code)
    by_topic: dict[str, list[Fields]] = {}
    for p in response.partitions:
        by_topic.setdefault(p.topic, []).append(
            {
                "partition_index": p.partition,
                "committed_offset": p.committed_offset,
                "committed_leader_epoch": p.committed_leader_epoch,
                "metadata": p.metadata,
                # v0–v1 have no top-level error: Kafka puts it on every partition.
                "error_code": error if version < 2 and error else int(p.error_code),
            }
        )
    return {"throttle_time_ms": 0, "topics": _topics(by_topic.items()), "error_code": error}


def describe_fields(response: Any, raw: Raw = _same) -> Fields:
    """A DescribeGroupsResponse."""
    return {
        "throttle_time_ms": 0,
        "groups": [
            {
                "error_code": int(g.error_code),
                "group_id": g.group_id,
                "group_state": g.group_state,
                "protocol_type": g.protocol_type,
                "protocol_data": g.protocol_data,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "member_metadata": raw(m.member_metadata),
                        "member_assignment": raw(m.member_assignment),
                    }
                    for m in g.members
                ],
            }
            for g in response.groups
        ],
    }


def list_fields(response: Any) -> Fields:
    """A ListGroupsResponse."""
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "groups": [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type,
                "group_state": g.group_state,
                "group_type": g.group_type,
            }
            for g in response.groups
        ],
    }


def delete_fields(response: Any) -> Fields:
    """A DeleteGroupsResponse."""
    return {
        "throttle_time_ms": 0,
        "results": [
            {"group_id": r.group_id, "error_code": int(r.error_code)} for r in response.results
        ],
    }


def _topics(by_topic: Iterable[tuple[str, list[Fields]]]) -> list[Fields]:
    return [{"name": name, "partitions": parts} for name, parts in by_topic]
