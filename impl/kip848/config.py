"""Broker settings a consumer-protocol group obeys (`group.consumer.*`) and the cluster's topics;
every default is Kafka 4.3.0's. The implementation's own twin of the specification's settings:
impl/ never imports spec/."""

from __future__ import annotations

from dataclasses import dataclass, field

from groupspec.vocabulary.errors import InvalidConfigError

from ..config import INT32_MAX

UNIFORM_ASSIGNOR = "uniform"
RANGE_ASSIGNOR = "range"
SERVER_ASSIGNORS = (UNIFORM_ASSIGNOR, RANGE_ASSIGNOR)


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic of the cluster's metadata: its name, its id and its partition count."""

    name: str
    topic_id: str
    partitions: int


DEFAULT_TOPICS = (Topic("t0", "t0-id", 2), Topic("t1", "t1-id", 1))


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """The coordinator's consumer-group settings and topic metadata, validated when built."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = INT32_MAX
    # The first is the default when no member names one.
    assignors: tuple[str, ...] = SERVER_ASSIGNORS
    # KIP-1263: the least time between two target computations (0: at every epoch bump).
    assignment_interval_ms: int = 1_000
    topics: tuple[Topic, ...] = DEFAULT_TOPICS
    # group.consumer.regex.refresh.interval.ms: how old a group's regular-expression resolution
    # may grow before a heartbeat starts a new one (10 minutes).
    regex_refresh_interval_ms: int = 600_000
    # Lookup tables built once from `topics`.
    _by_name: dict[str, Topic] = field(init=False, repr=False, compare=False)
    _by_id: dict[str, Topic] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in (
            "session_timeout_ms",
            "heartbeat_interval_ms",
            "max_size",
            "regex_refresh_interval_ms",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise InvalidConfigError(f"{name} must be a positive integer, got {value!r}")
        interval = self.assignment_interval_ms
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 0:
            raise InvalidConfigError(
                f"assignment_interval_ms must be a non-negative integer, got {interval!r}"
            )
        if not self.assignors or any(a not in SERVER_ASSIGNORS for a in self.assignors):
            raise InvalidConfigError(
                f"assignors must be a non-empty selection of {list(SERVER_ASSIGNORS)}, "
                f"got {list(self.assignors)}"
            )
        by_name = {topic.name: topic for topic in self.topics}
        by_id = {topic.topic_id: topic for topic in self.topics}
        if len(by_name) != len(self.topics) or len(by_id) != len(self.topics):
            raise InvalidConfigError(f"topic names and ids must be unique, got {self.topics}")
        for topic in self.topics:
            if topic.partitions <= 0:
                raise InvalidConfigError(f"topic {topic.name} must have partitions, got {topic}")
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_by_id", by_id)

    @property
    def default_assignor(self) -> str:
        """The assignor a group uses when no member names one."""
        return self.assignors[0]

    def topic_named(self, name: str) -> Topic | None:
        """The topic called `name`, or None when the cluster has none."""
        return self._by_name.get(name)

    def topic_with_id(self, topic_id: str) -> Topic | None:
        """The topic whose id is `topic_id`, or None when the cluster has none."""
        return self._by_id.get(topic_id)
