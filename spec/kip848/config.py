"""The broker settings a consumer-protocol group obeys (docs/protocol.md §12.1), and the topics
the cluster holds, validated up front. Every default is Kafka 4.3.0's
(`group-coordinator/.../GroupCoordinatorConfig.java`)."""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import InvalidConfigError

from ..config import INT32_MAX
from .profiles import KAFKA_4_3, KIP848_PROFILES
from .proposed_fixes import PROPOSED_FIXES

UNIFORM_ASSIGNOR = "uniform"
RANGE_ASSIGNOR = "range"
SERVER_ASSIGNORS = (UNIFORM_ASSIGNOR, RANGE_ASSIGNOR)
# group.consumer.migration.policy (ConsumerGroupMigrationPolicy): which online conversions between
# a classic group and a consumer group the coordinator performs (docs/protocol.md §12.15).
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
# How much of the groups' `__consumer_offsets` partition the log cleaner has cleaned when a
# coordinator loads it (docs/protocol.md §12.16, spec/kip848/records.py `appended`).
# "compacted": all of it, the last value of each key and no tombstones. "active-segment": none of
# it, every record in the order written, tombstones included: the cleaner never cleans the active
# segment, and a small group's records fill a fraction of one 100 MiB segment
# (offsets.topic.segment.bytes).
COMPACTED_LOG = "compacted"
ACTIVE_SEGMENT_LOG = "active-segment"
LOG_CLEANINGS = (COMPACTED_LOG, ACTIVE_SEGMENT_LOG)


@dataclass(frozen=True, order=True)
class TopicMetadata:
    """A topic of the cluster's metadata image: its name, its id and its partition count."""

    name: str
    topic_id: str
    partitions: int


DEFAULT_TOPICS = (TopicMetadata("t0", "t0-id", 2), TopicMetadata("t1", "t1-id", 1))


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """The coordinator's consumer-group settings (`group.consumer.*`) and the topic metadata."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = INT32_MAX
    # group.consumer.assignors: the first is the default when no member names one.
    assignors: tuple[str, ...] = SERVER_ASSIGNORS
    # group.consumer.assignment.interval.ms (KIP-1263, Kafka 4.3): the least time between two
    # target-assignment computations. 0 recomputes at every epoch bump, as 4.0-4.2 did.
    assignment_interval_ms: int = 1_000
    topics: tuple[TopicMetadata, ...] = DEFAULT_TOPICS
    migration_policy: str = "bidirectional"
    # Which release's coordinator to follow where they differ (spec/kip848/profiles.py).
    kafka_version: str = KAFKA_4_3
    # Whether the broker serves the consumer protocol at all (KafkaApis'
    # isConsumerGroupProtocolEnabled): not with the old Scala coordinator of Kafka 3.x, the
    # classic 3.x profile's, nor without "consumer" in group.coordinator.rebalance.protocols.
    consumer_protocol_enabled: bool = True
    # group.consumer.regex.refresh.interval.ms: how old a group's regular-expression resolution
    # may grow before a heartbeat starts a new one (Kafka's default, 10 minutes).
    regex_refresh_interval_ms: int = 600_000
    # Fixes proposed to Kafka and in no release, applied on top of the profile
    # (spec/kip848/proposed_fixes.py); none by default: the coordinator as released.
    proposed_fixes: tuple[str, ...] = ()
    # What a load finds of the records written (LOG_CLEANINGS): not a broker setting but where
    # the log cleaner stands, which the records' sizes and the topic's segment size decide.
    log_cleaning: str = COMPACTED_LOG

    def __post_init__(self) -> None:
        if self.kafka_version not in KIP848_PROFILES:
            raise InvalidConfigError(
                f"kafka_version must be one of {', '.join(KIP848_PROFILES)}, "
                f"got {self.kafka_version!r}"
            )
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
        names = [topic.name for topic in self.topics]
        ids = [topic.topic_id for topic in self.topics]
        if len(set(names)) != len(names) or len(set(ids)) != len(ids):
            raise InvalidConfigError(f"topic names and ids must be unique, got {self.topics}")
        for topic in self.topics:
            if topic.partitions <= 0:
                raise InvalidConfigError(f"topic {topic.name} must have partitions, got {topic}")
        unknown = [fix for fix in self.proposed_fixes if fix not in PROPOSED_FIXES]
        if unknown:
            raise InvalidConfigError(
                f"proposed_fixes must be among {list(PROPOSED_FIXES)}, got {unknown}"
            )
        if self.migration_policy not in MIGRATION_POLICIES:
            raise InvalidConfigError(
                f"migration_policy must be one of {list(MIGRATION_POLICIES)}, "
                f"got {self.migration_policy!r}"
            )
        if self.log_cleaning not in LOG_CLEANINGS:
            raise InvalidConfigError(
                f"log_cleaning must be one of {list(LOG_CLEANINGS)}, got {self.log_cleaning!r}"
            )

    @property
    def upgrade_enabled(self) -> bool:
        """Whether a non-empty classic group may become a consumer group online."""
        return self.migration_policy in ("upgrade", "bidirectional")

    @property
    def downgrade_enabled(self) -> bool:
        """Whether a consumer group left with only classic members may become a classic group."""
        return self.migration_policy in ("downgrade", "bidirectional")

    @property
    def default_assignor(self) -> str:
        """The assignor a group uses when no member names one."""
        return self.assignors[0]

    def topic_named(self, name: str) -> TopicMetadata | None:
        """The topic called `name`, or None when the cluster has none."""
        return next((topic for topic in self.topics if topic.name == name), None)

    def topic_with_id(self, topic_id: str) -> TopicMetadata | None:
        """The topic whose id is `topic_id`, or None when the cluster has none."""
        return next((topic for topic in self.topics if topic.topic_id == topic_id), None)
