"""The named parameters of the mixed world (`MixedWorld`): one classic consumer and one KIP-848
consumer in one group, the partitions, the server assignor, group.consumer.migration.policy and
the leave budget, each with its documented range (models/parameters.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer import ConsumerConfig
from groupspec.spec.kip848.config import (
    MIGRATION_POLICIES,
    SERVER_ASSIGNORS,
    ConsumerGroupConfig,
    TopicMetadata,
)
from groupspec.spec.kip848.proposed_fixes import PROPOSED_FIXES
from groupspec.vocabulary.errors import InvalidConfigError

from .mixed_faults import MIXED_FAULTS
from .mixed_second_member import SECOND_KINDS
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
    world has no clock; a timer fires only for a member no running client holds, such as the
    member of a classic consumer that closed (`classic_closes`). Off by default:
    `consumer_max_size` (group.consumer.max.size), `classic_static` (the classic consumer's own
    instance id), `classic_closes` and `close_when_idle`, and `misbehaving_client` (refused
    classic requests to the consumer group, models/mixed_misbehaving.py), `second_classic` (a
    second classic client that joins once and stops, models/mixed_second_member.py) and
    `classic_max_size` (group.max.size).
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
    rolling_downgrade: bool = documented(
        False,
        "the two consumers are one application instance (group.instance.id i1) restarted with "
        "the classic protocol: the classic consumer starts once the KIP-848 consumer has left "
        "with epoch -2",
    )
    classic_topics: int = documented(
        0,
        "how many topics the classic consumer subscribes to, the first ones (0: every topic)",
        minimum=0,
        maximum=MAX_TOPICS,
    )
    fault: str = documented(
        "",
        "a historical bug of Kafka's coordinator in mixed groups to re-introduce (empty: none)",
        choices=("", *MIXED_FAULTS),
    )
    consumer_max_size: int = documented(
        0,
        "group.consumer.max.size: the most members a consumer group holds (0: Kafka's default, "
        "no limit the world reaches)",
        minimum=0,
        maximum=2,
    )
    classic_static: bool = documented(
        False,
        "the classic consumer is a static member of its own (group.instance.id i2); not with "
        "rolling_downgrade, where it shares i1",
    )
    classic_closes: int = documented(
        0,
        "budget: the classic consumer, a classic member of the consumer group, closes "
        "(Consumer.close(): a dynamic member's LeaveGroup); its member's timers may then fire",
        minimum=0,
        maximum=1,
    )
    close_when_idle: bool = documented(
        False,
        "the classic consumer closes only when Stable with nothing in flight (an application "
        "closing between polls), not at any step: a smaller world",
    )
    misbehaving_client: bool = documented(
        False,
        "a client sending the consumer group classic requests no Kafka consumer sends "
        "(models/mixed_misbehaving.py): each refused, changing nothing",
    )
    second_classic: str = documented(
        "",
        "a second classic client that joins once (JoinGroup, then again with the member id it "
        "was given) and then stops: a classic consumer ('consumer') or a Kafka Connect worker "
        "('connect'), models/mixed_second_member.py (empty: none)",
        choices=("", *SECOND_KINDS),
    )
    second_joins_classic: bool = documented(
        False,
        "the second classic client sends only while the group is a classic group with members "
        "(a second instance of an application already running, before any upgrade): a smaller "
        "world, where no consumer group holds a third member",
    )
    classic_max_size: int = documented(
        0,
        "group.max.size, the most members a classic group holds, which also bounds a downgrade "
        "(0: Kafka's default, no limit the world reaches)",
        minimum=0,
        maximum=2,
    )
    proposed_fix: str = documented(
        "",
        "a fix proposed to Kafka and in no release, applied to the coordinator "
        "(spec/kip848/proposed_fixes.py; empty: the coordinator as released)",
        choices=("", *PROPOSED_FIXES),
    )

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.classic_topics > len(self.partitions):
            raise InvalidConfigError(
                f"classic_topics must be at most the number of topics ({len(self.partitions)}), "
                f"got {self.classic_topics}"
            )
        if self.classic_static and self.rolling_downgrade:
            raise InvalidConfigError(
                "classic_static and rolling_downgrade exclude each other: in a rolling downgrade "
                "the classic consumer is the KIP-848 consumer's instance i1"
            )

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic names, t0, t1, ..."""
        return tuple(f"t{index}" for index in range(len(self.partitions)))

    def coordinator_config(self) -> ConsumerGroupConfig:
        """The consumer-group settings: the topics, the one assignor, a target recomputed at
        every epoch bump (no clock), the migration policy, group.consumer.max.size."""
        config = ConsumerGroupConfig(
            assignors=(self.assignor,),
            assignment_interval_ms=0,
            topics=tuple(
                TopicMetadata(name, f"{name}-id", count)
                for name, count in zip(self.topics, self.partitions, strict=True)
            ),
            migration_policy=self.migration_policy,
            proposed_fixes=(self.proposed_fix,) if self.proposed_fix else (),
        )
        if self.consumer_max_size:
            config = replace(config, max_size=self.consumer_max_size)
        return config

    def classic_coordinator_config(self) -> CoordinatorConfig:
        """The classic settings: Kafka's defaults, but group.max.size with `classic_max_size`."""
        if self.classic_max_size:
            return CoordinatorConfig(group_max_size=self.classic_max_size)
        return CoordinatorConfig()

    @property
    def instance_id(self) -> str | None:
        """The group.instance.id the two consumers share in a rolling downgrade, else None."""
        return "i1" if self.rolling_downgrade else None

    @property
    def classic_instance_id(self) -> str | None:
        """The classic consumer's group.instance.id: i1 in a rolling downgrade, i2 when it is
        static on its own, else None."""
        return "i2" if self.classic_static else self.instance_id

    def classic_consumer_config(self) -> ConsumerConfig:
        """The classic consumer: eager, with the range assignor, subscribing to the first
        `classic_topics` topics (every topic by default), static in a rolling downgrade or
        with `classic_static`."""
        topics = self.topics[: self.classic_topics] if self.classic_topics else self.topics
        return ConsumerConfig(
            group_id="g",
            topics=topics,
            assignors=("range",),
            group_instance_id=self.classic_instance_id,
        )
