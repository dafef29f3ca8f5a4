"""The named parameters of the KIP-848 world (`Kip848World`): consumers, topics, the assignor and
the budgets of what happens to them, each with its documented range (models/parameters.py).

`check_ranges` refuses a value out of its range, naming the key; `validate` refuses what the
ranges cannot say (a subscription change with one topic, a subscription to a topic the cluster
does not hold).
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.spec.config import INT32_MAX
from groupspec.spec.kip848.config import (
    ACTIVE_SEGMENT_LOG,
    LOG_CLEANINGS,
    SERVER_ASSIGNORS,
    ConsumerGroupConfig,
    TopicMetadata,
)
from groupspec.spec.kip848.consumer.librdkafka_subscriptions import is_pattern
from groupspec.spec.kip848.profiles import KAFKA_3_9, KAFKA_4_3, KIP848_PROFILES
from groupspec.spec.kip848.proposed_fixes import PROPOSED_FIXES
from groupspec.spec.kip848.regex import compiles_as_re2

from .kip848_clock import ASSIGNMENT_INTERVAL_MS
from .kip848_faults import KIP848_FAULTS
from .parameters import ParameterError, check_ranges, documented

# Every consumer more multiplies the states by the interleavings of its steps: 3 consumers with
# one fault budget already take minutes, 4 would not finish.
MAX_CONSUMERS = 3
MAX_TOPICS = 3
MAX_PARTITIONS = 4
MAX_BUDGET = 2
CLIENTS = ("java", "librdkafka")
# Budgets whose steps were read only in the Java consumer (librdkafka's differ or were not
# compared): a librdkafka world refuses them rather than borrow the Java consumer's steps.
_NOT_COMPARED_FOR_LIBRDKAFKA = (
    "poll_expiries",
    "subscription_changes",
    "commits",
    "offset_fetches",
)
# Switches whose consumer behaviour was read only in Kafka's Java consumer (3.9's member ids, its
# fatal UNSUPPORTED_VERSION).
_JAVA_ONLY = ("coordinator_member_ids", "consumer_protocol_disabled")


@dataclass(frozen=True)
class Kip848Parameters:
    """Everything that shapes a KIP-848 world.

    `consumers` consumers (members "c1", "c2", ...; a restarted one gets a new member id,
    "c1-2") subscribe to every topic; topic `t<i>` has `partitions[i]` partitions. The
    coordinator offers `assignor` only. Budgets, each shared by all consumers: `crashes` (a
    consumer process dies at any point and may restart as a new member), `leaves`
    (unsubscribe(): the consumer revokes, leaves with epoch -1 and stays out), `subscription_changes`
    (one consumer switches to `alternative_subscription`), `poll_expiries` (a consumer misses
    max.poll.interval.ms, leaves and later rejoins), `message_losses` (a heartbeat or its
    response is lost; the consumer's request times out), `commits` (a member commits the
    partitions it holds at its epoch, and retries at a newer one on STALE_MEMBER_EPOCH).
    With `admin`, an admin client (Kafka's Admin API) describes and lists the group and
    fetches its offsets at any step, and once each deletes it and commits an offset without a
    member (generation -1), each request answered in the step that sends it.
    `kafka_version` picks the coordinator's profile. `group_max_size` is
    group.consumer.max.size (0: unlimited). With `slow_consumers` a member's session and
    rebalance timeouts may fire while its consumer still runs (the consumer missed its
    deadlines); otherwise only for members whose consumer is gone or stopped heartbeating.
    With `static_members` each consumer carries group.instance.id `i<n>`, kept across restarts,
    and a leave is close(): the consumer leaves with epoch -2 and its process may start again
    under a new member id, taking over the instance's assignment. `failovers` moves the group's
    coordinator away and back: its memory is lost and rebuilt from the log, and heartbeats
    meanwhile get NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS.
    `client` picks the consumers' client: Kafka's Java consumer or librdkafka's, which differs in
    the fields its heartbeats carry, when it reconciles and how it leaves (docs/kip-848.md).
    `fault` re-introduces a bug of Kafka's history (models/kip848_faults/, docs/bugs.md).
    `offset_fetches` is a budget of OffsetFetch requests a member sends for the partitions it
    holds, at its latest epoch (a poll initializing their positions). With `misbehaving_client`
    a client sends requests no Kafka consumer sends (models/kip848_misbehaving.py).
    With `coordinator_member_ids` the Java consumers are Kafka 3.9's in how they join: v0 with an
    empty member id, then the id the coordinator generated. With `consumer_protocol_disabled` the
    broker answers every heartbeat and describe UNSUPPORTED_VERSION (the Java consumer's fatal).
    With `assignment_interval` the coordinator waits group.consumer.assignment.interval.ms between
    two targets and the world keeps a clock (models/kip848_clock.py).
    `log_cleaning` says what a coordinator loading the group's `__consumer_offsets` partition
    finds, and what the durability invariant replays: the log cleaned (the last value of each
    key) or, with "active-segment", every record in the order written, tombstones included.
    """

    consumers: int = documented(2, "consumers in the group", minimum=1, maximum=MAX_CONSUMERS)
    partitions: tuple[int, ...] = documented(
        (2, 1),
        "partitions of each topic (t0, t1, ...)",
        minimum=1,
        maximum=MAX_PARTITIONS,
        length=(1, MAX_TOPICS),
    )
    assignor: str = documented(
        "uniform", "the server assignor the coordinator offers", choices=SERVER_ASSIGNORS
    )
    crashes: int = documented(
        0, "budget: consumer processes that die (each may restart)", minimum=0, maximum=MAX_BUDGET
    )
    leaves: int = documented(
        0, "budget: consumers that unsubscribe for good", minimum=0, maximum=MAX_CONSUMERS
    )
    subscription_changes: int = documented(
        0, "budget: subscription changes to alternative_subscription", minimum=0, maximum=1
    )
    alternative_subscription: tuple[str, ...] = documented(
        ("t0",),
        "the topics a consumer switches to on a subscription change",
        length=(1, MAX_TOPICS),
        note="topics of the cluster",
    )
    poll_expiries: int = documented(
        0, "budget: consumers that miss max.poll.interval.ms", minimum=0, maximum=1
    )
    message_losses: int = documented(
        0, "budget: heartbeats or responses lost", minimum=0, maximum=MAX_BUDGET
    )
    reorder: bool = documented(
        False, "a client's messages may overtake each other (else each queue is FIFO)"
    )
    group_max_size: int = documented(
        0, "group.consumer.max.size (0: unlimited)", minimum=0, maximum=MAX_CONSUMERS
    )
    slow_consumers: bool = documented(
        False, "member timeouts may fire while the consumer still runs (it missed a deadline)"
    )
    fault: str = documented(
        "",
        "a historical bug of Kafka's consumer-protocol coordinator to re-introduce (empty: none)",
        choices=("", *KIP848_FAULTS),
    )
    check_convergence: bool = documented(
        True, "also check the liveness property Converges (keeps the state graph)"
    )
    static_members: bool = documented(
        False,
        "each consumer has a group.instance.id (i1, i2, ...) that its restarts keep; a leave is "
        "close() with epoch -2, after which the process may start again",
    )
    failovers: int = documented(
        0,
        "budget: coordinator failovers (memory lost, the group rebuilt from its records)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    commits: int = documented(
        0,
        "budget: offset commits consumers send for the partitions they hold",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    admin: bool = documented(
        False,
        "an admin client: describes and lists the group and fetches its offsets at any time, "
        "deletes it once (DeleteGroups) and commits an offset once at generation -1",
    )
    client: str = documented(
        "java",
        "the consumers' client: Kafka's Java consumer or librdkafka's (spec/kip848/consumer/)",
        choices=CLIENTS,
    )
    kafka_version: str = documented(
        KAFKA_4_3,
        "the coordinator's release where they differ (spec/kip848/profiles.py)",
        choices=tuple(KIP848_PROFILES),
    )
    offset_fetches: int = documented(
        0,
        "budget: committed-offset fetches (OffsetFetch with member id and epoch) consumers send "
        "for the partitions they were given, each retried at a newer epoch on STALE_MEMBER_EPOCH",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    misbehaving_client: bool = documented(
        False,
        "a client that breaks the consumer protocol sends, at any moment, a request no Kafka "
        "consumer sends (a join without a subscription or with an assignor the broker lacks, a "
        "describe of the empty group id, an OffsetCommit v8, a commit to a group the coordinator "
        "does not hold; against Kafka 3.9 also a ConsumerGroupHeartbeat v1 join, ignoring "
        "ApiVersions), each refused and changing nothing",
    )
    regex_subscriptions: bool = documented(
        False,
        "consumer c1 subscribes with the pattern regex_pattern (subscribe(SubscriptionPattern), "
        "librdkafka's rd_kafka_subscribe), which the coordinator resolves in a step of its own",
    )
    regex_pattern: str = documented(
        "t.*",
        "the RE2J pattern c1 subscribes with",
        note="with regex_subscriptions; librdkafka's starts with ^",
    )
    regex_changes: int = documented(
        0,
        "budget: c1 subscribes again with one of regex_alternatives",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    regex_alternatives: tuple[str, ...] = documented(
        ("t0", "t(?=1)"),
        "the patterns c1 may switch to (one RE2 refuses gets INVALID_REGULAR_EXPRESSION); with "
        "librdkafka, entries of its subscription list: a ^ pattern or a topic name",
        length=(1, 3),
        note="non-empty patterns; librdkafka's compile or are topics of the cluster",
    )
    regex_refreshes: int = documented(
        0,
        "budget: the coordinator's clock passes group.consumer.regex.refresh.interval.ms",
        minimum=0,
        maximum=1,
    )
    coordinator_member_ids: bool = documented(
        False,
        "the consumers join with an empty member id on ConsumerGroupHeartbeat v0 and take the id "
        "the coordinator generates, as Kafka 3.9's Java consumer does (else they generate it, "
        "KIP-1082)",
    )
    consumer_protocol_disabled: bool = documented(
        False,
        "the broker does not serve the consumer protocol (group.coordinator.rebalance.protocols "
        "without consumer, 3.9's default): heartbeats and describes get UNSUPPORTED_VERSION",
    )
    assignment_interval: bool = documented(
        False,
        "group.consumer.assignment.interval.ms of 1 s and a clock: a step lets the interval since "
        "the last target computation elapse (else the world has no clock and the interval is 0)",
    )
    proposed_fix: str = documented(
        "",
        "a fix proposed to Kafka and in no release, applied to the coordinator "
        "(spec/kip848/proposed_fixes.py; empty: the coordinator as released)",
        choices=("", *PROPOSED_FIXES),
    )
    log_cleaning: str = documented(
        "compacted",
        "what replay reads of __consumer_offsets: the log cleaned to its end (the last value of "
        "each key, no tombstones) or active-segment, every record in the order written, "
        "tombstones included, as in the segment the log cleaner never cleans",
        choices=LOG_CLEANINGS,
    )

    def __post_init__(self) -> None:
        check_ranges(self)
        validate(self)

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic names, t0, t1, ..."""
        return tuple(f"t{index}" for index in range(len(self.partitions)))

    def coordinator_config(self) -> ConsumerGroupConfig:
        """The coordinator's settings: the topics, the one assignor, a target recomputed at every
        epoch bump (without `assignment_interval` the world has no clock, so KIP-1263's interval
        is 0), the size limit."""
        return ConsumerGroupConfig(
            max_size=self.group_max_size or INT32_MAX,
            assignors=(self.assignor,),
            assignment_interval_ms=ASSIGNMENT_INTERVAL_MS if self.assignment_interval else 0,
            kafka_version=self.kafka_version,
            consumer_protocol_enabled=not self.consumer_protocol_disabled,
            proposed_fixes=(self.proposed_fix,) if self.proposed_fix else (),
            log_cleaning=self.log_cleaning,
            topics=tuple(
                TopicMetadata(name, f"{name}-id", count)
                for name, count in zip(self.topics, self.partitions, strict=True)
            ),
        )


def validate(parameters: Kip848Parameters) -> None:
    """Refuse what the ranges cannot say, naming the key."""
    if parameters.client == "librdkafka":
        if parameters.kafka_version == KAFKA_3_9:
            raise ParameterError(
                "client", "librdkafka sends ConsumerGroupHeartbeat v1 only; Kafka 3.9 serves v0"
            )
        for budget in (*_NOT_COMPARED_FOR_LIBRDKAFKA, *_JAVA_ONLY):
            if getattr(parameters, budget):
                raise ParameterError(budget, "not modelled for librdkafka's consumer (client)")
    _validate_regex(parameters)
    if parameters.log_cleaning == ACTIVE_SEGMENT_LOG and parameters.slow_consumers:
        raise ParameterError(
            "log_cleaning",
            "active-segment keeps every record, and with slow_consumers a member fenced by its "
            "timeout rejoins and is fenced again without end: the log, and the states, grow "
            "without bound",
        )
    unknown = sorted(set(parameters.alternative_subscription) - set(parameters.topics))
    if unknown:
        raise ParameterError("alternative_subscription", f"topics {unknown} are not in the cluster")
    if parameters.subscription_changes and set(parameters.alternative_subscription) == set(
        parameters.topics
    ):
        raise ParameterError(
            "alternative_subscription",
            "must differ from the full subscription for a subscription change to change it",
        )


def _validate_regex(parameters: Kip848Parameters) -> None:
    """Refuse regex budgets without a pattern subscription, a pattern subscription where the
    heartbeat cannot carry one, and subscriptions librdkafka would not take."""
    if not parameters.regex_subscriptions:
        for budget in ("regex_changes", "regex_refreshes"):
            if getattr(parameters, budget):
                raise ParameterError(budget, "needs regex_subscriptions")
        return
    if parameters.kafka_version == KAFKA_3_9:
        raise ParameterError(
            "regex_subscriptions",
            "SubscribedTopicRegex needs ConsumerGroupHeartbeat v1; 3.9 has v0",
        )
    if not parameters.regex_pattern:
        raise ParameterError("regex_pattern", "must not be empty")
    if "" in parameters.regex_alternatives:
        raise ParameterError("regex_alternatives", "must not be empty patterns")
    if parameters.client == "librdkafka":
        _validate_librdkafka_entries(parameters)


def _validate_librdkafka_entries(parameters: Kip848Parameters) -> None:
    """librdkafka subscribes to a list whose `^` entries are patterns and the rest topic names:
    c1's pattern must be one that RE2 compiles (librdkafka refuses what its own engine does not
    compile before anything is sent; where the engines disagree is not modelled), and with
    `regex_changes` each alternative such a pattern or a topic of the cluster."""
    if not is_pattern(parameters.regex_pattern):
        raise ParameterError(
            "regex_pattern", "librdkafka takes an entry as a pattern only if it starts with ^"
        )
    if not compiles_as_re2(parameters.regex_pattern):
        raise ParameterError("regex_pattern", "librdkafka refuses a pattern RE2 cannot compile")
    # The alternatives matter only to a change (the defaults are the Java consumer's patterns).
    for entry in parameters.regex_alternatives if parameters.regex_changes else ():
        if is_pattern(entry) and not compiles_as_re2(entry):
            raise ParameterError(
                "regex_alternatives", f"{entry!r}: librdkafka refuses a pattern RE2 cannot compile"
            )
        if not is_pattern(entry) and entry not in parameters.topics:
            raise ParameterError(
                "regex_alternatives", f"{entry!r} is neither a ^ pattern nor a topic of the cluster"
            )
