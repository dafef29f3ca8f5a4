"""What one consumer step produces: requests to send, rebalance callbacks, errors, rules fired.

`ConsumerOutcome` is the result of `ConsumerSpec.step`. Callbacks are the calls Kafka makes on
the application's ConsumerRebalanceListener; errors are the exceptions Kafka would raise to the
application (from poll, commit or close). `Effects` collects them while a handler runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import Request, TopicPartition

from ..assignment import sorted_partitions
from .rules import ConsumerRule

if TYPE_CHECKING:
    from .state import ConsumerState


@dataclass(frozen=True)
class Send:
    """A request the consumer sends to the coordinator, under its own correlation id."""

    correlation_id: int
    request: Request


@dataclass(frozen=True)
class PartitionsRevoked:
    """ConsumerRebalanceListener.onPartitionsRevoked: the member gives these up cleanly."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class PartitionsAssigned:
    """ConsumerRebalanceListener.onPartitionsAssigned: the partitions newly added."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class PartitionsLost:
    """ConsumerRebalanceListener.onPartitionsLost: the member may already have lost these."""

    partitions: tuple[TopicPartition, ...]


Callback = PartitionsRevoked | PartitionsAssigned | PartitionsLost


@dataclass(frozen=True)
class ApplicationError:
    """An exception Kafka raises to the application; `kind` names the Java exception class.

    `api` is the request whose response caused it ("" for a local failure), `error` the Kafka
    error code behind it when there is one.
    """

    kind: str
    api: str = ""
    error: ErrorCode | None = None


def commit_failed(api: str = "", error: ErrorCode | None = None) -> ApplicationError:
    """CommitFailedException: the member is not (any longer) part of an active group."""
    return ApplicationError("CommitFailedException", api, error)


def rebalance_in_progress(api: str = "", error: ErrorCode | None = None) -> ApplicationError:
    """RebalanceInProgressException: retry after poll() finishes the rebalance."""
    return ApplicationError("RebalanceInProgressException", api, error)


def retriable_commit_failed(api: str = "", error: ErrorCode | None = None) -> ApplicationError:
    """RetriableCommitFailedException: the commit may succeed if tried again."""
    return ApplicationError("RetriableCommitFailedException", api, error)


def kafka_error(api: str, error: ErrorCode) -> ApplicationError:
    """A non-retriable exception for one call (the consumer itself stays usable)."""
    return ApplicationError("KafkaException", api, error)


def fatal(api: str, error: ErrorCode | None, kind: str = "FatalException") -> ApplicationError:
    """An exception that ends the consumer's group membership; only close() remains."""
    return ApplicationError(kind, api, error)


@dataclass(frozen=True)
class ConsumerOutcome:
    """The result of one consumer step."""

    state: ConsumerState
    sends: tuple[Send, ...]
    callbacks: tuple[Callback, ...]
    errors: tuple[ApplicationError, ...]
    rules: tuple[str, ...]
    # Partitions whose offsets an OffsetCommit response confirmed in this step.
    committed: tuple[TopicPartition, ...] = ()


class Effects:
    """Collects what a handler sends, calls back, raises and fires during one step."""

    def __init__(self, known_rules: frozenset[ConsumerRule]) -> None:
        self._known_rules = known_rules
        self.sends: list[Send] = []
        self.callbacks: list[Callback] = []
        self.errors: list[ApplicationError] = []
        self.rules: list[str] = []
        self.committed: list[TopicPartition] = []

    def fire(self, rule: ConsumerRule) -> None:
        """Record that the consumer rule `rule` (a constant of consumer/rules.py) applied, by its id."""
        if rule not in self._known_rules:
            raise KeyError(
                f"unknown consumer rule {rule!r}: add it to CONSUMER_RULES in spec/consumer/rules.py"
            )
        self.rules.append(rule.rule_id)

    def revoked(self, partitions: tuple[TopicPartition, ...]) -> None:
        """Call onPartitionsRevoked."""
        self.callbacks.append(PartitionsRevoked(sorted_partitions(partitions)))

    def assigned(self, partitions: tuple[TopicPartition, ...]) -> None:
        """Call onPartitionsAssigned."""
        self.callbacks.append(PartitionsAssigned(sorted_partitions(partitions)))

    def lost(self, partitions: tuple[TopicPartition, ...]) -> None:
        """Call onPartitionsLost."""
        self.callbacks.append(PartitionsLost(sorted_partitions(partitions)))

    def raise_error(self, error: ApplicationError) -> None:
        """Raise `error` to the application."""
        self.errors.append(error)

    def outcome(self, state: ConsumerState) -> ConsumerOutcome:
        """The outcome of the step that ended in `state`."""
        return ConsumerOutcome(
            state=state,
            sends=tuple(self.sends),
            callbacks=tuple(self.callbacks),
            errors=tuple(self.errors),
            rules=tuple(self.rules),
            committed=sorted_partitions(self.committed),
        )
