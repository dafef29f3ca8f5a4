"""Classic-protocol requests inside consumer-protocol groups, for the consumer-protocol oracle
(oracle/trace/kip848.py): which of them are its own, how their member ids are read, and how
their responses are compared.

Kafka 4.x lets a classic consumer join a consumer group: its JoinGroup, SyncGroup, Heartbeat
and LeaveGroup are translated onto a member of that group (`spec/kip848/classic_members.py`),
and a last consumer-protocol member leaving may turn the group back into a classic one
(`spec/kip848/conversion.py`). The consumer-protocol oracle judges these four APIs for every
group it has seen a ConsumerGroupHeartbeat of, through `spec/kip848/mixed.py`; the classic
oracle judges them for every other group.

Member ids: the specification hands a classic member `<client id>-<n>`, Kafka 4.4.0 a bare
base64 UUID (a classic member of a consumer group gets a consumer-protocol member id, unlike the
`<client id>-<UUID>` of a classic group); the response that shows an id binds the two spellings, as
ConsumerGroupHeartbeat v0's coordinator-generated ids are bound. A response is compared by the
classic oracle's form of it (`comparison.comparable`), except SyncGroup's assignment, compared
by what it assigns: Kafka and the specification may order a topic's partitions differently in
the bytes.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from groupspec.spec.consumer_protocol import SubscriptionDecodeError, decode_assignment
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
)
from groupspec.wire.group_apis import HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP, BodyError

from .binding import Binding
from .comparison import comparable

# The classic APIs a classic member of a consumer group speaks.
CLASSIC_MEMBER_APIS = frozenset({JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP})
ClassicMemberRequest = JoinGroupRequest | SyncGroupRequest | HeartbeatRequest | LeaveGroupRequest


def classic_group_of(api_key: int, body: dict[str, Any]) -> str | None:
    """The group a classic member's request names, or None for another API."""
    if api_key not in CLASSIC_MEMBER_APIS:
        return None
    group_id = body.get("group_id")
    return group_id if isinstance(group_id, str) else None


def in_spec_ids(request: ClassicMemberRequest, spec_id: Any) -> ClassicMemberRequest:
    """`request` with each member id it names read through `spec_id` (observed -> spec)."""
    if isinstance(request, LeaveGroupRequest):
        members = tuple(
            replace(m, member_id=spec_id(m.member_id) if m.member_id else m.member_id)
            for m in request.members
        )
        return replace(request, members=members)
    if not request.member_id:
        return request
    return replace(request, member_id=spec_id(request.member_id))


def bindings(
    api_key: int,
    version: int,
    spec_body: dict[str, Any],
    observed: dict[str, Any],
    spelling: tuple[tuple[str, str], ...],
) -> list[tuple[tuple[str, str], ...]]:
    """Every extension of `spelling` (spec id, observed id) under which the observed response
    is the specification's `spec_body`; none when it is not."""
    expected, seen = _form(api_key, version, spec_body), _form(api_key, version, observed)
    return [
        tuple(sorted(extended.observed_spelling().items()))
        for extended in Binding(dict(spelling)).unify(expected, seen)
    ]


def _form(api_key: int, version: int, body: dict[str, Any]) -> Any:
    form = comparable(api_key, version, body)
    if api_key != SYNC_GROUP or body.get("error_code") != 0:
        return form
    # (error, protocol type, protocol name, assignment bytes): the bytes read as what they assign.
    return (*form[:-1], _assigned(form[-1]))


def _assigned(text: str) -> Any:
    try:
        partitions, user_data = decode_assignment(base64.b64decode(text))
    except (SubscriptionDecodeError, ValueError) as error:
        raise BodyError(f"SyncGroup assignment: {error}") from None
    return (frozenset((p.topic, p.partition) for p in partitions), user_data)
