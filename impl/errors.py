"""Kafka's error codes as the coordinator answers them, and the impl's own input errors."""

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


# How a failed append to __consumer_offsets reaches the client
# (GroupMetadataManager.appendGroupMetadataErrorToResponseError).
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

APPEND_ERRORS: frozenset[ErrorCode] = frozenset(_APPEND_ERROR_TO_RESPONSE)


def append_error_to_response(error: ErrorCode) -> ErrorCode:
    """The error a client sees when appending to the offsets log failed with `error`."""
    return _APPEND_ERROR_TO_RESPONSE.get(error, error)


class CoordinatorInputError(ValueError):
    """Input the coordinator refuses because no Kafka client or broker could produce it."""


class MalformedRequestError(CoordinatorInputError):
    """A request whose fields cannot occur on the wire (wrong type, out of range, ...)."""

    def __init__(self, request: str, field: str, problem: str) -> None:
        super().__init__(f"{request}.{field}: {problem}")
        self.request = request
        self.field = field
        self.problem = problem


class UnknownRequestError(CoordinatorInputError):
    """An object handed to `Coordinator.handle` that is not a request the coordinator serves."""


class TimerNotArmedError(CoordinatorInputError):
    """A timer event fired explicitly although that timer is not armed."""


class PartitionStateError(CoordinatorInputError):
    """A partition ownership change that does not fit the partition's current state."""


class InvalidConfigError(CoordinatorInputError):
    """A coordinator configuration no Kafka broker would start with."""


class PolicyError(RuntimeError):
    """The policy object answered outside the options it was given (a bug in the policy)."""


class IllegalStateTransitionError(RuntimeError):
    """The coordinator tried a state change Kafka's state table forbids (a coordinator bug)."""
