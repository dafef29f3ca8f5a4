"""The group settings groupspec starts an Apache Kafka broker with, as broker properties and as a
trace header's coordinator settings.

The header names settings as the specification's `CoordinatorConfig` does (docs/trace-format.md),
so a trace recorded from the broker is judged with the broker's own configuration. The defaults
are test-friendly where Kafka's would only slow a test down (a 500 ms initial rebalance delay, as
`groupspec serve` runs under `groupspec workload`; one `__consumer_offsets` partition) and
Kafka's own elsewhere; every one is written to server.properties explicitly, so what the header
says is what the broker was told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KAFKA_4X, KAFKA_3_9 = "4.x", "3.9"
# The oracle's Kafka version profile (`kafka_version` in the header) each line's classic-protocol
# coordinator follows with the settings written here: 4.x has only the Java coordinator; 3.9 in
# KRaft mode serves the classic protocol with the Scala GroupCoordinator unless the new
# coordinator is enabled, which groupspec leaves off (docs/kafka.md).
ORACLE_PROFILE = {KAFKA_4X: "4.x", KAFKA_3_9: "3.x"}
INT32_MAX = 2**31 - 1
MINUTE_MS = 60_000


@dataclass(frozen=True)
class GroupSetting:
    """One setting: its header name, its broker property, groupspec's value for it, the
    milliseconds one unit of the property stands for (offsets.retention.minutes counts
    minutes), and its least value (as the specification's CoordinatorConfig takes it)."""

    name: str
    kafka_property: str
    default: int
    unit_ms: int = 1
    minimum: int = 1


GROUP_SETTINGS = (
    GroupSetting(
        "group_initial_rebalance_delay_ms", "group.initial.rebalance.delay.ms", 500, minimum=0
    ),
    GroupSetting("group_min_session_timeout_ms", "group.min.session.timeout.ms", 6_000),
    GroupSetting("group_max_session_timeout_ms", "group.max.session.timeout.ms", 1_800_000),
    GroupSetting("group_max_size", "group.max.size", INT32_MAX),
    GroupSetting("offsets_topic_num_partitions", "offsets.topic.num.partitions", 1),
    GroupSetting(
        "offsets_retention_ms", "offsets.retention.minutes", 7 * 24 * 60 * MINUTE_MS, MINUTE_MS
    ),
    GroupSetting(
        "offsets_retention_check_interval_ms", "offsets.retention.check.interval.ms", 600_000
    ),
    GroupSetting("offset_metadata_max_bytes", "offset.metadata.max.bytes", 4_096, minimum=0),
    GroupSetting("broker_id", "node.id", 1, minimum=0),
)
BY_NAME = {setting.name: setting for setting in GROUP_SETTINGS}
# Settings Kafka does not let a broker change, stated in the header all the same: both
# coordinators wait five minutes for a new member's join (3.9: GroupCoordinator.scala
# NewMemberJoinTimeoutMs; 4.x: GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS).
FIXED_SETTINGS = {"new_member_join_timeout_ms": 300_000}


def group_settings(overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
    """groupspec's settings with `overrides` (header names) applied; ValueError names an
    override a broker cannot take."""
    settings = {setting.name: setting.default for setting in GROUP_SETTINGS}
    for name, value in (overrides or {}).items():
        if name in FIXED_SETTINGS:
            if value != FIXED_SETTINGS[name]:
                raise ValueError(
                    f"{name} is fixed at {FIXED_SETTINGS[name]} in Kafka; a broker cannot change it"
                )
            continue
        if name == "kafka_version":
            raise ValueError("kafka_version is the broker's own: choose the Kafka line instead")
        setting = BY_NAME.get(name)
        if setting is None:
            known = ", ".join(sorted([*BY_NAME, *FIXED_SETTINGS]))
            raise ValueError(f"{name} is not a broker group setting; known: {known}")
        if not isinstance(value, int) or isinstance(value, bool) or value < setting.minimum:
            kind = "a positive" if setting.minimum else "a non-negative"
            raise ValueError(f"{name} must be {kind} integer, got {value!r}")
        if value % setting.unit_ms:
            raise ValueError(
                f"{name} must be a whole number of {setting.kafka_property.rsplit('.', 1)[1]} "
                f"({setting.kafka_property}), got {value} ms"
            )
        settings[name] = value
    low, high = settings["group_min_session_timeout_ms"], settings["group_max_session_timeout_ms"]
    if low > high:
        raise ValueError(
            f"group_min_session_timeout_ms exceeds group_max_session_timeout_ms ({low} > {high})"
        )
    return settings


def broker_properties(settings: Mapping[str, int]) -> dict[str, str]:
    """The server.properties lines (property -> value) that give a broker `settings`."""
    return {
        BY_NAME[name].kafka_property: str(value // BY_NAME[name].unit_ms)
        for name, value in settings.items()
    }


def header_settings(line: str, settings: Mapping[str, int]) -> dict[str, Any]:
    """The trace header's coordinator settings of a `line` broker started with `settings`."""
    return {**settings, **FIXED_SETTINGS, "kafka_version": ORACLE_PROFILE[line]}


# Consumer-protocol (KIP-848) settings of a 4.x broker: (the specification's ConsumerGroupConfig
# name, the broker property, groupspec's value). Test-friendly like the classic ones: a 6 s
# session and a 500 ms heartbeat so that a crashed member is fenced within a test's time (Kafka:
# 45 s and 5 s, with minimums of the same), and the target assignment recomputed at every group
# epoch bump (assignment interval 0, as Kafka 4.0-4.2 did) so that its timing is not a choice the
# oracle must follow. Every 4.x broker groupspec starts is given them; classic groups ignore them.
CONSUMER_GROUP_SETTINGS: tuple[tuple[str, str, int], ...] = (
    ("session_timeout_ms", "group.consumer.session.timeout.ms", 6_000),
    ("", "group.consumer.min.session.timeout.ms", 6_000),
    ("heartbeat_interval_ms", "group.consumer.heartbeat.interval.ms", 500),
    ("", "group.consumer.min.heartbeat.interval.ms", 500),
    ("assignment_interval_ms", "group.consumer.assignment.interval.ms", 0),
    ("", "group.consumer.min.assignment.interval.ms", 0),
    # Kafka's default (GroupCoordinatorConfig.CONSUMER_GROUP_MAX_SIZE_DEFAULT); a broker may be
    # given a smaller one (`consumer_group_overrides`), which the consumer-protocol probes need.
    ("max_size", "group.consumer.max.size", INT32_MAX),
)
# The consumer-protocol settings a broker may be started with otherwise than groupspec's values.
CONSUMER_GROUP_OVERRIDABLE = ("max_size",)
# Kafka 4.x's group.consumer.assignors: uniform first (the default), then range.
CONSUMER_GROUP_ASSIGNORS = ("uniform", "range")


def consumer_group_overrides(
    line: str, overrides: Mapping[str, int] | None = None
) -> dict[str, int]:
    """`overrides` of the consumer-protocol settings (ConsumerGroupConfig names, among
    CONSUMER_GROUP_OVERRIDABLE) checked; ValueError names one a `line` broker cannot take."""
    checked = dict(overrides or {})
    if checked and line != KAFKA_4X:
        raise ValueError(f"a Kafka {line} broker has no consumer-protocol settings to override")
    for name, value in checked.items():
        if name not in CONSUMER_GROUP_OVERRIDABLE:
            raise ValueError(
                f"{name} is not an overridable consumer-protocol setting; known: "
                f"{', '.join(CONSUMER_GROUP_OVERRIDABLE)}"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return checked


def _consumer_group_values(
    line: str, overrides: Mapping[str, int] | None
) -> list[tuple[str, str, int]]:
    if line != KAFKA_4X:
        return []
    given = overrides or {}
    return [(name, prop, given.get(name, value)) for name, prop, value in CONSUMER_GROUP_SETTINGS]


def consumer_group_properties(
    line: str, overrides: Mapping[str, int] | None = None
) -> dict[str, str]:
    """The server.properties lines of a `line` broker's consumer-protocol settings, with
    `overrides` (`consumer_group_overrides`) applied (none before 4.x: 3.9's consumer protocol
    is a preview groupspec does not enable)."""
    return {prop: str(value) for _, prop, value in _consumer_group_values(line, overrides)}


def consumer_group_header(
    line: str, topics: list[dict[str, Any]], overrides: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """A trace header's consumer-protocol settings (`TraceHeader.consumer_groups`) of a `line`
    broker started with `overrides` and holding `topics` ({"name", "topic_id", "partitions"}
    each)."""
    settings: dict[str, Any] = {
        name: value for name, _, value in _consumer_group_values(line, overrides) if name
    }
    return {**settings, "assignors": list(CONSUMER_GROUP_ASSIGNORS), "topics": topics}
