"""The Java consumer subscribing with a regular expression the coordinator resolves:
`subscribe(SubscriptionPattern)` (KIP-848, docs/protocol.md §12.18).

Kafka's clients module, 4.x (`AsyncKafkaConsumer.subscribe(SubscriptionPattern, ...)`,
`SubscriptionState`, `ConsumerHeartbeatRequestManager.HeartbeatState`,
`AbstractHeartbeatRequestManager.onErrorResponse`):

- The pattern is an RE2J expression the client does not compile: it goes to the coordinator as
  `SubscribedTopicRegex`, with an empty `SubscribedTopicNames` (a pattern subscription names no
  topics in `SubscriptionState.subscription()`).
- The heartbeat carries the pattern when the member joins (with every field), after its sent
  fields were reset (an error response, a failed request), and whenever the pattern differs
  from the one last sent (`machine.heartbeat`, the `send_pattern` flag).
- Subscribing again with another pattern while a member keeps the membership: the next
  heartbeat carries the new pattern. Switching between a pattern and topic names is refused by
  `SubscriptionState` (the subscription types are mutually exclusive) until `unsubscribe()`,
  which leaves the group: a member never sends an empty pattern to drop its expression.
- INVALID_REGULAR_EXPRESSION is fatal to the consumer (`handleFatalFailure`), as any error the
  machine does not name (`machine._on_error`).
"""

from __future__ import annotations

from dataclasses import replace

from .machine import _TAKES_ASSIGNMENT, ClientStep, ConsumerState, Effects, KafkaConsumer, _joining
from .rules import CG_CLIENT_SUBSCRIBE_CHANGED, CG_CLIENT_SUBSCRIBE_JOINING


def subscribe_pattern(consumer: KafkaConsumer, pattern: str) -> ClientStep | None:
    """subscribe(SubscriptionPattern) then poll(): an Unsubscribed consumer joins with the
    pattern and no topic names (None if not Unsubscribed)."""
    if consumer.state is not ConsumerState.UNSUBSCRIBED:
        return None
    effects = Effects()
    effects.fire(CG_CLIENT_SUBSCRIBE_JOINING)
    joining = _joining(replace(consumer, pattern=pattern, send_pattern=True), ())
    return effects.done(joining)


def change_pattern(consumer: KafkaConsumer, pattern: str) -> ClientStep | None:
    """subscribe(another SubscriptionPattern) of a member subscribed with a pattern: its next
    heartbeat carries the new one (None when it is not a member taking assignments, does not
    subscribe with a pattern, or the pattern is the same)."""
    if (
        consumer.state not in _TAKES_ASSIGNMENT
        or consumer.pattern is None
        or consumer.pattern == pattern
    ):
        return None
    effects = Effects()
    effects.fire(CG_CLIENT_SUBSCRIBE_CHANGED)
    return effects.done(replace(consumer, pattern=pattern, send_pattern=True))
