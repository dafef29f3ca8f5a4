"""Kafka's error codes as a group coordinator answers them, and the errors of input no Kafka
client or broker could produce (shared by the specification and the implementation)."""

from __future__ import annotations

from enum import IntEnum
from types import MappingProxyType


class ErrorCode(IntEnum):
    """Kafka protocol error codes (`org.apache.kafka.common.protocol.Errors`) used by groups."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    GROUP_AUTHORIZATION_FAILED = 30
    UNSUPPORTED_VERSION = 35
    INVALID_REQUEST = 42
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    UNSTABLE_OFFSET_COMMIT = 88
    # KIP-848's ConsumerGroupHeartbeat (groupspec.vocabulary.consumer_groups)
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    INVALID_REGULAR_EXPRESSION = 128


# How a failed append to __consumer_offsets is reported to the client (reference §2.0,
# GroupMetadataManager.appendGroupMetadataErrorToResponseError).
_APPEND_ERROR_TO_RESPONSE: MappingProxyType[ErrorCode, ErrorCode] = MappingProxyType(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
        ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
        ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
    }
)

APPEND_ERRORS: tuple[ErrorCode, ...] = tuple(_APPEND_ERROR_TO_RESPONSE)


def append_error_to_response(error: ErrorCode) -> ErrorCode:
    """The error a client sees when appending to the offsets log failed with `error`."""
    return _APPEND_ERROR_TO_RESPONSE.get(error, error)


class InputError(ValueError):
    """Input a coordinator refuses because no Kafka client or broker could produce it."""


class MalformedRequestError(InputError):
    """A request whose field values cannot occur on the wire (wrong type, out of range, ...)."""

    def __init__(self, request: str, field: str, problem: str) -> None:
        super().__init__(f"{request}.{field}: {problem}")
        self.request = request
        self.field = field
        self.problem = problem


class InvalidConfigError(InputError):
    """A coordinator configuration that no Kafka broker would start with."""


class IllegalStateTransitionError(RuntimeError):
    """A coordinator tried to move a group between states Kafka's state table does not connect
    (reference §1).

    This is a defect in the coordinator (or in a fault injected into it), never a client's doing.
    """
