"""The Kafka releases whose consumer-protocol coordinators differ (docs/protocol.md §12.17): the
version profiles of spec/kip848/, named as `ConsumerGroupConfig.kafka_version` takes them.

A rule of spec/kip848/rules.py that only some releases' coordinator has lists those profiles in
its `kafka_versions`; every other rule holds in all three.
"""

from __future__ import annotations

KAFKA_3_9 = "3.9"
KAFKA_4_0 = "4.0-4.2"
KAFKA_4_3 = "4.3+"
KIP848_PROFILES: dict[str, str] = {
    KAFKA_3_9: "Kafka 3.9's preview: ConsumerGroupHeartbeat v0 only, migration disabled",
    KAFKA_4_0: "Kafka 4.0 to 4.2: OffsetCommit's epoch must equal the member's epoch",
    KAFKA_4_3: "Kafka 4.3 and later: per-partition assignment epochs (KIP-1251), the assignment interval (KIP-1263)",
}
EVERY_PROFILE: tuple[str, ...] = tuple(KIP848_PROFILES)
BEFORE_4_3: tuple[str, ...] = (KAFKA_3_9, KAFKA_4_0)
SINCE_4_0: tuple[str, ...] = (KAFKA_4_0, KAFKA_4_3)

# The highest ConsumerGroupHeartbeat version each profile's broker accepts (3.9's schema has
# validVersions "0"; v1, client-generated member ids, came with 4.0).
MAX_HEARTBEAT_VERSION: dict[str, int] = {KAFKA_3_9: 0, KAFKA_4_0: 1, KAFKA_4_3: 1}
# group.consumer.migration.policy's default: DISABLED in 3.9, BIDIRECTIONAL from 4.0.
MIGRATION_POLICY_DEFAULT: dict[str, str] = {
    KAFKA_3_9: "disabled",
    KAFKA_4_0: "bidirectional",
    KAFKA_4_3: "bidirectional",
}


def has_assignment_epochs(kafka_version: str) -> bool:
    """Whether the profile keeps the epoch each partition was assigned at (KIP-1251)."""
    return kafka_version == KAFKA_4_3


def has_assignment_interval(kafka_version: str) -> bool:
    """Whether the profile waits group.consumer.assignment.interval.ms between two targets."""
    return kafka_version == KAFKA_4_3
