"""Regular-expression subscriptions (ConsumerGroupHeartbeat v1's SubscribedTopicRegex), as Kafka
4.3.0's `GroupMetadataManager` resolves them (`maybeUpdateRegularExpressions`,
`handleRegularExpressionsResult`, `maybeDeleteResolvedRegularExpressions`).

A member subscribes to its topic names and to the topics its expression resolved to. The group
resolves its expressions off the request path: a heartbeat that brings an expression no member
had, or finds one unresolved, or the last resolution older than `regex_refresh_interval_ms`
(or older than a topic created since), starts a resolution of every expression the group has,
unless one is under way or the last finished within 10 s. The resolution is queued on the
coordinator's timer heap, due at once (`RegexResolutionCompleted`), and when it completes each
expression still subscribed takes the topics whose whole name it matches; the group epoch is
bumped if any expression's topics changed, so the next heartbeat computes a new target. An
expression new to the group that RE2 would not compile is refused with
INVALID_REGULAR_EXPRESSION (impl/kip848/re2_syntax.py).
"""

from __future__ import annotations

import re
from enum import Enum

from .config import ConsumerGroupConfig
from .re2_syntax import re2_compiles
from .runtime import REGEX, Runtime
from .state import Group, ResolvedRegex

# GroupMetadataManager.REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: no resolution of a group's
# expressions starts within this long of its last one.
REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
# When a group that never resolved an expression last did (Kafka's Long.MIN_VALUE).
NEVER_RESOLVED_MS = -(2**63)


class RegexUpdate(Enum):
    """What a heartbeat did to its member's expression (UpdateRegularExpressionStatus)."""

    NO_CHANGE = "no change"
    UPDATED = "updated"
    UPDATED_AND_RESOLVED = "updated and resolved"


def refuses_regex(group: Group | None, old: str, new: str) -> bool:
    """Whether a member moving from expression `old` to `new` is refused with
    INVALID_REGULAR_EXPRESSION: `new` is an expression no member of the group has, and RE2
    would not compile it."""
    if new == old or new == "":
        return False
    if group is not None and new in group.regex_subscribers:
        return False
    return not re2_compiles(new)


def update_regexes(rt: Runtime, group: Group, old: str, new: str) -> RegexUpdate:
    """A member of `group` moves from expression `old` to `new` (the group still counts it
    under `old`): drop the resolution of an expression it was the last to use, maybe start a
    resolution, and say how its subscription changed. `new` passed `refuses_regex`."""
    status = RegexUpdate.NO_CHANGE
    required = False
    if old != new:
        if new and new not in group.regex_subscribers:
            status, required = RegexUpdate.UPDATED, True
        elif new and new not in group.resolved_regexes:
            status = RegexUpdate.UPDATED
        else:
            status = RegexUpdate.UPDATED_AND_RESOLVED
        if old and group.regex_subscribers.get(old) == 1:
            group.resolved_regexes.pop(old, None)
    maybe_start_resolution(rt, group, old, new, required)
    return status


def maybe_start_resolution(rt: Runtime, group: Group, old: str, new: str, required: bool) -> None:
    """Start resolving the group's expressions (as they will be once a member moved from `old`
    to `new`) when one is required and none is under way nor finished within 10 s."""
    subscribers = group.regex_subscribers
    if (not required and not subscribers) or group.regex_resolution is not None:
        return
    now = rt.now
    last = last_resolution_ms(group)
    if now <= last + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
        return
    counts = dict(subscribers)
    if old:
        counts[old] -= 1
    if new:
        counts[new] = counts.get(new, 0) + 1
    subscribed = tuple(sorted(regex for regex, number in counts.items() if number > 0))
    required = (
        required
        or len(subscribed) != len(group.resolved_regexes)
        or now > last + rt.config.regex_refresh_interval_ms
        or group.regex_topics_version < rt.topics_version
    )
    if not required or not subscribed:
        return
    group.regex_resolution = subscribed
    group.regex_topics_version = rt.topics_version
    group.regex_entry = rt.push(now, REGEX, group, "")


def last_resolution_ms(group: Group) -> int:
    """When the group last resolved its expressions (a resolution resolves them all, so their
    times agree: the first's stands for all), or NEVER_RESOLVED_MS."""
    resolved = group.resolved_regexes
    if not resolved:
        return NEVER_RESOLVED_MS
    return resolved[min(resolved)].timestamp_ms


def drop_unused_resolutions(group: Group) -> None:
    """Forget the resolutions no member subscribes with any more (members were removed)."""
    for regex in [r for r in group.resolved_regexes if r not in group.regex_subscribers]:
        del group.resolved_regexes[regex]


def matching_topics(config: ConsumerGroupConfig, regex: str) -> frozenset[str]:
    """The cluster's topics whose whole name `regex` matches (none if it does not compile)."""
    try:
        compiled = re.compile(regex)
    except re.error:
        return frozenset()
    return frozenset(t.name for t in config.topics if compiled.fullmatch(t.name))


def on_regex_resolved(rt: Runtime, group: Group) -> None:
    """The group's resolution under way completes: each expression still subscribed takes the
    topics it matches now; the group epoch is bumped if any expression's topics changed or the
    group's metadata hash differs from the one its last epoch bump recorded."""
    regexes = group.regex_resolution
    if regexes is None:
        return
    group.regex_resolution = None
    group.regex_entry = None
    changed = set()
    for regex in regexes:
        if regex not in group.regex_subscribers:
            continue
        topics = matching_topics(rt.config, regex)
        before = group.resolved_regexes.get(regex)
        if (before.topics if before is not None else frozenset()) != topics:
            changed.add(regex)
        group.resolved_regexes[regex] = ResolvedRegex(topics, rt.now)
    for member in group.members.values():
        if member.subscribed_topic_regex in changed:
            group.refresh_subscription(member)
    if changed or group.computed_metadata_hash(rt.config) != group.metadata_hash:
        group.bump_group_epoch(rt.config)
