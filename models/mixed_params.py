"""The named parameters of the mixed world (`MixedWorld`): one classic consumer and one KIP-848
consumer in one group, the partitions, the server assignor, group.consumer.migration.policy and
the leave budget, each with its documented range (models/parameters.py)."""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer import ConsumerConfig
from groupspec.spec.kip848.config import (
    MIGRATION_POLICIES,
    SERVER_ASSIGNORS,
    ConsumerGroupConfig,
    TopicMetadata,
)

from .parameters import check_ranges, documented

MAX_TOPICS = 2
MAX_PARTITIONS = 2


@dataclass(frozen=True)
class MixedParameters:
    """Everything that shapes a mixed world.

    The classic consumer ("classic", Kafka's ConsumerCoordinator with the eager range assignor)
    and the KIP-848 consumer ("c2") both subscribe to every topic; topic `t<i>` has
    `partitions[i]` partitions. The coordinator holds the group as a classic group or a consumer
    group, converting it under `migration_policy`. `leaves` is the budget of the KIP-848
    consumer's unsubscribe(), which leaves the classic member alone in a consumer group: the
    downgrade; `rejoins` lets it subscribe again afterwards (a second upgrade, docs/bugs.md). The
    world has no clock; a timer fires only for a member no running client holds.
    """

    partitions: tuple[int, ...] = documented(
        (1, 1),
        "partitions of each topic (t0, t1, ...)",
        minimum=1,
        maximum=MAX_PARTITIONS,
        length=(1, MAX_TOPICS),
    )
    assignor: str = documented(
        "uniform", "the server assignor the coordinator offers", choices=SERVER_ASSIGNORS
    )
    migration_policy: str = documented(
        "bidirectional", "group.consumer.migration.policy", choices=MIGRATION_POLICIES
    )
    leaves: int = documented(1, "budget: the KIP-848 consumer unsubscribes", minimum=0, maximum=1)
    rejoins: int = documented(
        0,
        "budget: the KIP-848 consumer subscribes again after leaving",
        minimum=0,
        maximum=1,
    )

    def __post_init__(self) -> None:
        check_ranges(self)

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic names, t0, t1, ..."""
        return tuple(f"t{index}" for index in range(len(self.partitions)))

    def coordinator_config(self) -> ConsumerGroupConfig:
        """The consumer-group settings: the topics, the one assignor, a target recomputed at
        every epoch bump (no clock), the migration policy."""
        return ConsumerGroupConfig(
            assignors=(self.assignor,),
            assignment_interval_ms=0,
            topics=tuple(
                TopicMetadata(name, f"{name}-id", count)
                for name, count in zip(self.topics, self.partitions, strict=True)
            ),
            migration_policy=self.migration_policy,
        )

    def classic_coordinator_config(self) -> CoordinatorConfig:
        """The classic settings: Kafka's defaults."""
        return CoordinatorConfig()

    def classic_consumer_config(self) -> ConsumerConfig:
        """The classic consumer: eager, with the range assignor, subscribing to every topic."""
        return ConsumerConfig(group_id="g", topics=self.topics, assignors=("range",))
