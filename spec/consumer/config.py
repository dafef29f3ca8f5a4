"""The consumer's group settings (reference §0), validated up front like Kafka's ConsumerConfig."""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import InvalidConfigError

from ..consumer_protocol import HIGHEST_SUBSCRIPTION_VERSION

DEFAULT_ASSIGNORS = ("range", "cooperative-sticky")

# The highest version of each API the spec's request classes model.
_HIGHEST_VERSIONS = {
    "join_group_version": 9,
    "sync_group_version": 5,
    "heartbeat_version": 4,
    "leave_group_version": 5,
    "offset_commit_version": 9,
    "find_coordinator_version": 6,
}

# The first version of each API that carries group.instance.id (KIP-345).
_INSTANCE_ID_SINCE = {
    "join_group_version": 5,
    "sync_group_version": 3,
    "heartbeat_version": 3,
    "offset_commit_version": 7,
}


@dataclass(frozen=True)
class ConsumerConfig:
    """One consumer's configuration; defaults are Kafka's.

    `group_instance_id` None makes a dynamic member. `assignors` are partition.assignment.strategy
    in preference order. `rebalance_timeout_ms` is max.poll.interval.ms. The `*_version` fields
    are the API versions negotiated with the broker; `subscription_version` is the
    ConsumerProtocolSubscription version the member encodes (0–3).
    """

    group_id: str
    topics: tuple[str, ...]
    client_id: str = "consumer"
    group_instance_id: str | None = None
    assignors: tuple[str, ...] = DEFAULT_ASSIGNORS
    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    heartbeat_interval_ms: int = 3_000
    join_group_version: int = 9
    sync_group_version: int = 5
    heartbeat_version: int = 4
    leave_group_version: int = 5
    offset_commit_version: int = 9
    find_coordinator_version: int = 3
    subscription_version: int = HIGHEST_SUBSCRIPTION_VERSION

    def __post_init__(self) -> None:
        _check_text("group_id", self.group_id)
        _check_text("client_id", self.client_id)
        if self.group_instance_id is not None:
            _check_text("group_instance_id", self.group_instance_id)
        if not isinstance(self.topics, tuple) or not self.topics:
            raise InvalidConfigError(f"topics must be a non-empty tuple, got {self.topics!r}")
        for topic in self.topics:
            _check_text("topics[]", topic)
        if not isinstance(self.assignors, tuple) or not self.assignors:
            raise InvalidConfigError(
                f"assignors must be a non-empty tuple of names, got {self.assignors!r}"
            )
        for name in self.assignors:
            _check_text("assignors[]", name)
        if len(set(self.assignors)) != len(self.assignors):
            raise InvalidConfigError(f"assignors names repeat: {self.assignors}")
        for name in ("session_timeout_ms", "rebalance_timeout_ms", "heartbeat_interval_ms"):
            value = getattr(self, name)
            if not _is_int(value) or value <= 0:
                raise InvalidConfigError(f"{name} must be a positive integer, got {value!r}")
        # Kafka's GroupRebalanceConfig: heartbeats must come more often than the session expires.
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise InvalidConfigError(
                "heartbeat_interval_ms must be lower than session_timeout_ms "
                f"({self.heartbeat_interval_ms} >= {self.session_timeout_ms})"
            )
        for name, highest in _HIGHEST_VERSIONS.items():
            value = getattr(self, name)
            if not _is_int(value) or not 0 <= value <= highest:
                raise InvalidConfigError(f"{name} must be in [0, {highest}], got {value!r}")
        if not _is_int(self.subscription_version) or not (
            0 <= self.subscription_version <= HIGHEST_SUBSCRIPTION_VERSION
        ):
            raise InvalidConfigError(
                f"subscription_version must be in [0, {HIGHEST_SUBSCRIPTION_VERSION}], "
                f"got {self.subscription_version!r}"
            )
        if self.group_instance_id is not None:
            # Kafka refuses static membership against brokers whose APIs predate KIP-345.
            for name, since in _INSTANCE_ID_SINCE.items():
                if getattr(self, name) < since:
                    raise InvalidConfigError(
                        f"group_instance_id needs {name} >= {since}, got {getattr(self, name)}"
                    )

    @property
    def is_static(self) -> bool:
        """Whether this is a static member (group.instance.id set)."""
        return self.group_instance_id is not None

    @property
    def subscribed_topics(self) -> tuple[str, ...]:
        """The configured topics, sorted and without duplicates."""
        return tuple(sorted(set(self.topics)))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str) or value == "":
        raise InvalidConfigError(f"{name} must be a non-empty string, got {value!r}")
