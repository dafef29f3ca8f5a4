"""The KIP-848 world's regular-expression subscriptions (`Kip848Parameters.regex_subscriptions`,
docs/protocol.md §12.18): consumer c1 subscribes with a pattern (spec/kip848/consumer/patterns.py)
and, within `regex_changes`, with another; a librdkafka c1 subscribes with the list
[regex_pattern] and, within `regex_changes`, again with one entry of `regex_alternatives`, a
pattern or a topic name (spec/kip848/consumer/librdkafka_subscriptions.py), without
unsubscribing. The coordinator resolves the group's patterns in a
step of its own (`RegexResolutionCompleted`, at any time after a heartbeat started it); and,
within `regex_refreshes`, its clock passes the refresh interval.

The world has no clock otherwise: the coordinator steps at time 0, where a group resolves its
patterns once (no resolution starts within 10 s of the last). A refresh step moves the clock past
group.consumer.regex.refresh.interval.ms, so the next heartbeat of a pattern subscriber starts a
resolution again, which finds the same topics (the cluster's topics never change in the
specification). Every later coordinator step happens at that time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from groupspec.checker.model import Transition
from groupspec.spec.events import EventNotEnabledError
from groupspec.spec.kip848 import ConsumerGroupCoordinatorSpec
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.consumer import librdkafka_subscriptions, patterns
from groupspec.spec.kip848.consumer.librdkafka import RdKafkaConsumer
from groupspec.spec.kip848.consumer.machine import ClientStep, KafkaConsumer
from groupspec.spec.kip848.regex import resolution_pending

from .kip848_params import Kip848Parameters

if TYPE_CHECKING:
    from .kip848_world import Kip848WorldState

# The budget a pattern change spends (a field of Kip848WorldState).
CHANGES_BUDGET = "regex_changes"


def subscribe(parameters: Kip848Parameters, consumer: KafkaConsumer) -> ClientStep | None:
    """c1's subscribe(SubscriptionPattern) then poll() (librdkafka's: rd_kafka_subscribe of the
    pattern alone), when it is Unsubscribed."""
    if isinstance(consumer, RdKafkaConsumer):
        return librdkafka_subscriptions.subscribe(consumer, (parameters.regex_pattern,))
    return patterns.subscribe_pattern(consumer, parameters.regex_pattern)


def pattern_changes(
    parameters: Kip848Parameters, consumer: KafkaConsumer
) -> list[tuple[str, str, ClientStep | None]]:
    """Each subscribe(another pattern) the consumer may make now, as the world's budgeted steps
    (action, budget, step); a Java consumer subscribing by names makes none, a librdkafka one
    subscribes again to any alternative, pattern or name."""
    if isinstance(consumer, RdKafkaConsumer):
        return [
            (
                "change_pattern",
                CHANGES_BUDGET,
                librdkafka_subscriptions.resubscribe(consumer, (entry,)),
            )
            for entry in parameters.regex_alternatives
        ]
    return [
        ("change_pattern", CHANGES_BUDGET, patterns.change_pattern(consumer, pattern))
        for pattern in parameters.regex_alternatives
    ]


def coordinator_steps(
    coordinator: ConsumerGroupCoordinatorSpec, config: ConsumerGroupConfig, state: Kip848WorldState
) -> list[Transition[Kip848WorldState]]:
    """Each resolution under way finishing, and the refresh interval passing (a budget)."""
    found: list[Transition[Kip848WorldState]] = []
    for event in resolution_pending(state.coordinator):
        try:
            outcomes = coordinator.step(state.coordinator, event, now_ms=state.now_ms)
        except EventNotEnabledError:
            continue
        for outcome in outcomes:
            after = replace(state, coordinator=outcome.state)
            found.append(Transition("resolve_regex", "resolve_regex", after, outcome.rules))
    if state.regex_refreshes:
        later = state.now_ms + config.regex_refresh_interval_ms + 1
        after = replace(state, regex_refreshes=state.regex_refreshes - 1, now_ms=later)
        found.append(Transition("regex_refresh", "regex_refresh", after))
    return found
