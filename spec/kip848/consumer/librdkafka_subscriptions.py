"""librdkafka's consumer subscribing by pattern (`group.protocol=consumer`): the list an
application hands `rd_kafka_subscribe`, its `^` entries patterns and the others topic names,
and subscribing again without unsubscribing (docs/protocol.md §12.14 and §12.18,
docs/kip-848.md "librdkafka's consumer").

Read from librdkafka's `src/rdkafka_cgrp.c`, `src/rdkafka_partition.c` and
`src/rdkafka_subscription.c` at tag v2.15.0 (v2.12.0 does the same; 2.15.0 adds a branch for
the share consumer):

- `rd_kafka_cgrp_subscription_set` keeps a subscription as two parts: the entries that do not
  start with `^` (`rd_kafka_topic_partition_list_remove_regexes`), and one pattern
  `rd_kafka_topic_partition_list_combine_regexes` makes of the `^` entries, each in
  parentheses, joined by `|` in the list's order, or the empty string when there are none. Every
  heartbeat that carries the subscription carries both, so a subscription by names sends an
  empty SubscribedTopicRegex and one by pattern an empty list of names
  (spec/kip848/consumer/librdkafka.py `heartbeat`).
- `rd_kafka_cgrp_consumer_subscribe`: subscribing again while a member and not leaving applies
  the new list at once (`rd_kafka_cgrp_consumer_apply_next_subscribe`) and marks it to be sent;
  nothing is revoked on the client's side, the coordinator's next assignment does it. Unlike the
  Java consumer, whose `SubscriptionState` keeps patterns and names apart until `unsubscribe()`,
  librdkafka goes from a pattern to names and back without leaving: the heartbeat after a switch
  to names sends SubscribedTopicRegex "", which drops the member's expression at the coordinator.
- `rd_kafka_subscribe` compiles each `^` entry with librdkafka's own regex engine and refuses the
  list (`_invalid_topic_cb`) before anything reaches the group, so the world only offers
  patterns RE2 compiles too (models/kip848_params.py).

Not modelled: subscribing after a fatal error (librdkafka unsubscribes then), and a subscription
made while leaving, kept for after the leave (the world subscribes an Unsubscribed consumer once
its leave is answered). An unchanged subscription is not offered as a step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from . import librdkafka
from .librdkafka import RdKafkaConsumer
from .machine import ClientStep, ConsumerState, Effects
from .rules import CG_RDKAFKA_SUBSCRIBE_CHANGED

# The first character that makes an entry of the subscription list a pattern.
PATTERN_MARK = "^"
_S = ConsumerState
# Members that apply a new subscription at once: in the group and not leaving (will_leave).
_RESUBSCRIBING = frozenset({_S.JOINING, _S.RECONCILING, _S.ACKNOWLEDGING, _S.STABLE, _S.FENCED})


def is_pattern(entry: str) -> bool:
    """Whether librdkafka takes a subscription entry as a pattern (it starts with `^`)."""
    return entry.startswith(PATTERN_MARK)


def combined_pattern(entries: Iterable[str]) -> str:
    """The one SubscribedTopicRegex librdkafka makes of a subscription's patterns: each in
    parentheses, joined by `|` in the list's order; the empty string when there are none."""
    found = [entry for entry in entries if is_pattern(entry)]
    if not found:
        return librdkafka.EMPTY_REGEX
    return "(" + ")|(".join(found) + ")"


def split(entries: Iterable[str]) -> tuple[tuple[str, ...], str | None]:
    """A subscription list as the consumer keeps it: its topic names, sorted, and its combined
    pattern (None when it has no pattern, which the heartbeat sends as the empty string)."""
    listed = tuple(entries)
    names = tuple(sorted({entry for entry in listed if not is_pattern(entry)}))
    return names, combined_pattern(listed) or None


def subscribe(consumer: RdKafkaConsumer, entries: tuple[str, ...]) -> ClientStep | None:
    """rd_kafka_subscribe(entries) of an Unsubscribed consumer whose leave is answered: it joins
    with the entries' names and combined pattern (None otherwise)."""
    names, pattern = split(entries)
    return librdkafka.subscribe(replace(consumer, pattern=pattern), names)


def resubscribe(consumer: RdKafkaConsumer, entries: tuple[str, ...]) -> ClientStep | None:
    """rd_kafka_subscribe(entries) again of a member not leaving: the new names and pattern
    replace the subscription and are owed to the coordinator (None when the consumer is not such
    a member, or the subscription is the same)."""
    names, pattern = split(entries)
    if consumer.state not in _RESUBSCRIBING:
        return None
    if (names, pattern) == (consumer.subscription, consumer.pattern):
        return None
    effects = Effects()
    effects.fire(CG_RDKAFKA_SUBSCRIBE_CHANGED)
    changed = replace(consumer, subscription=names, pattern=pattern, send_subscription=True)
    return effects.done(changed)
