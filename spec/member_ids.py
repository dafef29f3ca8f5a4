"""Which fields of the group APIs carry member ids: the one list every renaming uses.

Member ids are the coordinator's names for members. Tools that rename them (the model
checker's canonical forms, the oracle's binding of an implementation's ids to the spec's, the
differential tests) must find every one; this module says where they are, field by field, as
Kafka's message schemas name the fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    Request,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    DescribeGroupsResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    ResponseBody,
)

T = TypeVar("T")

# Per message: the fields holding one member id, and the list fields whose entries each hold
# one in their own `member_id` field ("members.member_id" in Kafka's schemas).
REQUEST_MEMBER_ID_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    JoinGroupRequest: (("member_id",), ()),
    SyncGroupRequest: (("member_id",), ("assignments",)),
    HeartbeatRequest: (("member_id",), ()),
    LeaveGroupRequest: ((), ("members",)),
    OffsetCommitRequest: (("member_id",), ()),
}
RESPONSE_MEMBER_ID_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    JoinGroupResponse: (("member_id", "leader"), ("members",)),
    LeaveGroupResponse: ((), ("members",)),
}


def _ids(message: Any, fields: dict[type, tuple[tuple[str, ...], tuple[str, ...]]]) -> list[str]:
    single, listed = fields.get(type(message), ((), ()))
    ids = [getattr(message, name) for name in single]
    for name in listed:
        ids += [entry.member_id for entry in getattr(message, name)]
    return ids


def request_member_ids(request: Request) -> list[str]:
    """Every member id a request names, in field order."""
    return _ids(request, REQUEST_MEMBER_ID_FIELDS)


def response_member_ids(body: ResponseBody) -> list[str]:
    """Every member id a response names, in field order (DescribeGroups: every group's members)."""
    if isinstance(body, DescribeGroupsResponse):
        return [member.member_id for group in body.groups for member in group.members]
    return _ids(body, RESPONSE_MEMBER_ID_FIELDS)


def rename_request_member_ids(request: T, rename: Callable[[str], str]) -> T:
    """`request` with every member id passed through `rename` (other fields unchanged)."""
    single, listed = REQUEST_MEMBER_ID_FIELDS.get(type(request), ((), ()))
    if not single and not listed:
        return request
    changes: dict[str, Any] = {name: rename(getattr(request, name)) for name in single}
    for name in listed:
        changes[name] = tuple(
            dataclasses.replace(entry, member_id=rename(entry.member_id))
            for entry in getattr(request, name)
        )
    return dataclasses.replace(request, **changes)  # type: ignore[type-var]
