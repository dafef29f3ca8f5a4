"""What can happen to a consumer: application calls, timers, responses and connection loss.

Time is abstract, as in the coordinator's models: a timer event may fire whenever its timer is
armed (`ConsumerSpec.enabled_events` lists them). An event whose precondition does not hold is
refused with `ConsumerEventNotEnabledError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import InputError
from groupspec.vocabulary.requests import TopicPartition
from groupspec.vocabulary.responses import ResponseBody

from ..assignment import Cluster


class ConsumerEventNotEnabledError(InputError):
    """An event the consumer cannot receive in its current state (e.g. an unexpected response)."""


@dataclass(frozen=True)
class Poll:
    """The application calls poll(): find the coordinator if unknown, then join if needed."""


@dataclass(frozen=True)
class HeartbeatDue:
    """heartbeat.interval.ms elapsed: the heartbeat thread sends a Heartbeat."""


@dataclass(frozen=True)
class SessionTimeoutExpired:
    """No successful heartbeat within session.timeout.ms: the coordinator is marked unknown."""


@dataclass(frozen=True)
class PollTimeoutExpired:
    """max.poll.interval.ms passed without poll(): the member leaves (if dynamic) and resets."""


@dataclass(frozen=True)
class CommitRequested:
    """The application commits offsets (commitSync/commitAsync): partition → next offset."""

    offsets: tuple[tuple[TopicPartition, int], ...]


@dataclass(frozen=True)
class SubscriptionChanged:
    """The application calls subscribe() with a new topic list."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class MetadataChanged:
    """A metadata refresh returned a new cluster snapshot (e.g. a topic gained partitions)."""

    cluster: Cluster


@dataclass(frozen=True)
class Close:
    """The application closes the consumer."""


@dataclass(frozen=True)
class ResponseReceived:
    """The coordinator's response to the request sent under `correlation_id`."""

    correlation_id: int
    body: ResponseBody


@dataclass(frozen=True)
class Disconnected:
    """The connection to the coordinator dropped: every request in flight fails."""


ConsumerEvent = (
    Poll
    | HeartbeatDue
    | SessionTimeoutExpired
    | PollTimeoutExpired
    | CommitRequested
    | SubscriptionChanged
    | MetadataChanged
    | Close
    | ResponseReceived
    | Disconnected
)

CONSUMER_EVENT_TYPES: tuple[type, ...] = (
    Poll,
    HeartbeatDue,
    SessionTimeoutExpired,
    PollTimeoutExpired,
    CommitRequested,
    SubscriptionChanged,
    MetadataChanged,
    Close,
    ResponseReceived,
    Disconnected,
)
