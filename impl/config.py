"""Broker settings the coordinator obeys; every default is Kafka's."""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import InvalidConfigError

INT32_MAX = 2**31 - 1

_POSITIVE = (
    "group_min_session_timeout_ms",
    "group_max_session_timeout_ms",
    "group_max_size",
    "new_member_join_timeout_ms",
    "offsets_topic_num_partitions",
    "offsets_retention_ms",
    "offsets_retention_check_interval_ms",
)
_NON_NEGATIVE = ("group_initial_rebalance_delay_ms", "offset_metadata_max_bytes", "broker_id")


@dataclass(frozen=True, slots=True)
class CoordinatorConfig:
    """The coordinator's configuration, validated when built.

    Whether an append to the offsets log fails is not configuration but the policy's answer
    (`Policy.append_error`), so production and tests share one config type.
    """

    group_min_session_timeout_ms: int = 6_000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3_000
    group_max_size: int = INT32_MAX
    new_member_join_timeout_ms: int = 300_000
    offsets_topic_num_partitions: int = 50
    offsets_retention_ms: int = 10_080 * 60_000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4_096
    broker_id: int = 0

    def __post_init__(self) -> None:
        for name in _POSITIVE:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise InvalidConfigError(f"{name} must be a positive integer, got {value!r}")
        for name in _NON_NEGATIVE:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidConfigError(f"{name} must be a non-negative integer, got {value!r}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise InvalidConfigError(
                "group_min_session_timeout_ms exceeds group_max_session_timeout_ms "
                f"({self.group_min_session_timeout_ms} > {self.group_max_session_timeout_ms})"
            )
