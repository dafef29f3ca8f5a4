"""Which Kafka errors the client treats as retriable (their exceptions extend RetriableException)."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode

RETRIABLE_ERRORS: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.UNSTABLE_OFFSET_COMMIT,
    }
)


def is_retriable(error: ErrorCode) -> bool:
    """Whether Kafka's exception for `error` is a RetriableException."""
    return error in RETRIABLE_ERRORS
