"""Answers another broker may give where the specification's coordinator would not (the group
world's `foreign_answers` fault).

A consumer meets brokers other than the one this project specifies: older and newer Kafka
versions, Kafka-compatible brokers, proxies, authorizers. The consumer's rules for their answers
(`client.*.unexpected_error`, `client.*.fatal_error`, an assignment it cannot decode, an
assignor it does not know) are part of its specification, and the consumer must handle each
without breaking a property. This fault replaces one answer a consumer reads by one of these.

A consumer that fails fatally on such an answer (GroupAuthorizationException, an unexpected
error, an undecodable assignment) has done what Kafka's does; `failed_by_foreign_answer`
recognizes it so the group converges without it, as it does without a consumer the
coordinator turned away.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.consumer.outcome import ApplicationError
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.responses import (
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    ResponseBody,
    SyncGroupResponse,
)

from .misbehaving_client import FOREIGN_ASSIGNOR, FOREIGN_PROTOCOL_TYPE

# A ConsumerProtocol assignment that announces more topics than it holds: version 0, then a
# topic array of 2^31-1 entries and nothing after it.
UNDECODABLE_ASSIGNMENT = b"\x00\x00\x7f\xff\xff\xff"
# Too short to hold even the version.
TRUNCATED_ASSIGNMENT = b"\x00"
# The error codes only a foreign answer brings to a consumer of this world.
FOREIGN_ERRORS = frozenset({ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.GROUP_AUTHORIZATION_FAILED})
# The fatal exceptions a malformed (not erroneous) foreign answer raises.
_MALFORMED_ANSWER_FAILURES = frozenset(
    {"IllegalStateException", "SchemaException", "InconsistentGroupProtocolException"}
)


def foreign_answers(body: ResponseBody) -> tuple[ResponseBody, ...]:
    """What another broker might have answered instead of `body` (none for an error answer:
    the fault replaces successes, which is where the consumer's other rules lie)."""
    if isinstance(body, FindCoordinatorResponse):
        if body.error_code is not ErrorCode.NONE:
            return ()
        return (replace(body, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED),)
    if isinstance(body, JoinGroupResponse):
        if body.error_code is not ErrorCode.NONE:
            return ()
        answers: list[ResponseBody] = [
            replace(body, error_code=ErrorCode.UNKNOWN_SERVER_ERROR),
            replace(body, protocol_type=FOREIGN_PROTOCOL_TYPE),
            replace(body, protocol_name=FOREIGN_ASSIGNOR),
        ]
        if body.members:
            garbled = replace(body.members[0], metadata=UNDECODABLE_ASSIGNMENT)
            answers.append(replace(body, members=(garbled, *body.members[1:])))
        return tuple(answers)
    if isinstance(body, SyncGroupResponse):
        if body.error_code is not ErrorCode.NONE:
            return ()
        return (
            replace(body, error_code=ErrorCode.UNKNOWN_SERVER_ERROR),
            replace(body, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED),
            replace(body, protocol_type=FOREIGN_PROTOCOL_TYPE),
            replace(body, assignment=UNDECODABLE_ASSIGNMENT),
            replace(body, assignment=TRUNCATED_ASSIGNMENT),
        )
    if isinstance(body, HeartbeatResponse | LeaveGroupResponse):
        if body.error_code is not ErrorCode.NONE:
            return ()
        return (replace(body, error_code=ErrorCode.UNKNOWN_SERVER_ERROR),)
    if isinstance(body, OffsetCommitResponse):
        if any(p.error_code is not ErrorCode.NONE for p in body.partitions):
            return ()
        return tuple(
            OffsetCommitResponse(tuple(replace(p, error_code=error) for p in body.partitions))
            for error in (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.UNKNOWN_SERVER_ERROR)
        )
    return ()


def failed_by_foreign_answer(failure: ApplicationError | None) -> bool:
    """Whether a consumer's fatal failure is one only a foreign answer causes in the world."""
    if failure is None:
        return False
    return failure.error in FOREIGN_ERRORS or failure.kind in _MALFORMED_ANSWER_FAILURES
