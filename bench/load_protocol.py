"""What the serve bench's load speaks, and what Kafka answers to it.

The request versions, the error codes the load tells apart, the bench's topic, and
`FormationError`: the one-line error for a broker that answers what Kafka never answers at that
step (`deviation`), or whose groups do not form.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka.errors import for_code

API_VERSIONS_VERSION = 0
METADATA_VERSION = 4  # the first with allow_auto_topic_creation
CREATE_TOPICS_VERSION = 4  # the first with replication factor -1 (the broker's default)
FIND_COORDINATOR_VERSION = 1
JOIN_VERSION = 5
SYNC_VERSION = 3
HEARTBEAT_VERSION = 3
COMMIT_VERSION = 7
LEAVE_VERSION = 1
API_KEYS = {
    "Metadata": (3, METADATA_VERSION),
    "OffsetCommit": (8, COMMIT_VERSION),
    "FindCoordinator": (10, FIND_COORDINATOR_VERSION),
    "JoinGroup": (11, JOIN_VERSION),
    "Heartbeat": (12, HEARTBEAT_VERSION),
    "SyncGroup": (14, SYNC_VERSION),
}
CREATE_TOPICS_KEY = 19

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
TOPIC_ALREADY_EXISTS = 36
MEMBER_ID_REQUIRED = 79
COORDINATOR_RETRIABLE = frozenset(
    {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR}
)
REBALANCE_ERRORS = frozenset({ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS})

CLIENT_ID = "groupspec-bench"
TOPIC = "bench"
RETRY_BACKOFF_S = 0.1  # a client's retry.backoff.ms


class FormationError(Exception):
    """A broker answered what Kafka never answers, or groups did not form (one line)."""


def error_name(code: int) -> str:
    """`INVALID_REQUEST (42)`: a Kafka error code with its name."""
    error = for_code(code)
    name = getattr(error, "message", None) if error.__name__ != "UnrecognizedBrokerError" else None
    return f"{name or 'UNKNOWN_CODE'} ({code})"


def _expected(codes: Iterable[int]) -> str:
    return ", ".join(error_name(code) for code in sorted(codes))


def deviation(request: str, code: int, allowed: Iterable[int], detail: str = "") -> FormationError:
    """The error for `request` answered `code` where Kafka answers one of `allowed`."""
    tail = f" ({detail})" if detail else ""
    return FormationError(
        f"{request} answered {error_name(code)}{tail}; Kafka answers {_expected(allowed)}"
    )
