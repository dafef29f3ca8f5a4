"""Broker settings the group coordinator obeys (reference §0), validated up front."""

from __future__ import annotations

from dataclasses import dataclass, field

from groupspec.vocabulary.errors import APPEND_ERRORS, ErrorCode, InvalidConfigError

INT32_MAX = 2**31 - 1

# The coordinator whose behaviour the specification follows where Kafka releases differ, and
# what each profile stands for. docs/protocol.md §11.2 lists the differences.
KAFKA_4X = "4.x"
KAFKA_3X = "3.x"
KAFKA_VERSIONS: dict[str, str] = {
    KAFKA_4X: "the Java group coordinator of Kafka 3.7+ and 4.x",
    KAFKA_3X: "the Scala GroupCoordinator of Kafka 2.8.1 to 3.9",
}


# How long a new member parked in JoinGroup may wait: fixed at 5 minutes in Kafka
# (the classic coordinator's new-member join timeout).
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000


@dataclass(frozen=True)
class CoordinatorConfig:
    """The coordinator's configuration; every default is Kafka's."""

    group_min_session_timeout_ms: int = 6_000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3_000
    group_max_size: int = INT32_MAX
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS
    offsets_topic_num_partitions: int = 50
    offsets_retention_ms: int = 10_080 * 60_000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4_096
    broker_id: int = 0
    # Append failures the log may answer with. Empty means every append succeeds; otherwise
    # each append is a nondeterministic choice between success and each listed error.
    write_failures: tuple[ErrorCode, ...] = field(default=())
    # Which release's coordinator to follow where they differ (one of KAFKA_VERSIONS).
    kafka_version: str = KAFKA_4X

    @property
    def is_scala_coordinator(self) -> bool:
        """Whether the Scala GroupCoordinator of Kafka 2.x-3.x is followed."""
        return self.kafka_version == KAFKA_3X

    def __post_init__(self) -> None:
        positive = (
            "group_min_session_timeout_ms",
            "group_max_session_timeout_ms",
            "group_max_size",
            "new_member_join_timeout_ms",
            "offsets_topic_num_partitions",
            "offsets_retention_ms",
            "offsets_retention_check_interval_ms",
        )
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise InvalidConfigError(f"{name} must be a positive integer, got {value!r}")
        for name in ("group_initial_rebalance_delay_ms", "offset_metadata_max_bytes", "broker_id"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidConfigError(f"{name} must be a non-negative integer, got {value!r}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise InvalidConfigError(
                "group_min_session_timeout_ms exceeds group_max_session_timeout_ms "
                f"({self.group_min_session_timeout_ms} > {self.group_max_session_timeout_ms})"
            )
        if self.kafka_version not in KAFKA_VERSIONS:
            raise InvalidConfigError(
                f"kafka_version must be one of {', '.join(KAFKA_VERSIONS)}, "
                f"got {self.kafka_version!r}"
            )
        for error in self.write_failures:
            if error not in APPEND_ERRORS:
                raise InvalidConfigError(
                    f"write_failures: {error!r} is not an error an append can fail with; "
                    f"choose from {[e.name for e in APPEND_ERRORS]}"
                )
