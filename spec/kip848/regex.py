"""Regular-expression subscriptions of consumer-protocol members (docs/protocol.md §12.18).

Kafka 4.3.0, `GroupMetadataManager.java`: `maybeUpdateRegularExpressions` (run by every
heartbeat after the member is updated), `handleRegularExpressionsResult` (the resolution's
result, handed back to the group's partition), `maybeDeleteResolvedRegularExpressions` (members
removed); `modern/consumer/TopicRegexResolver.java` and `Utils.throwIfRegularExpressionIsInvalid`.

A member may subscribe with topic names, a regular expression, or both; what it subscribes to is
the names and the topics its expression resolved to (`ConsumerGroup.subscribed_topics_of`). A
group resolves its expressions off the request path: a heartbeat that brings a new expression,
or finds one unresolved or the last resolution older than the refresh interval, starts a
resolution of every expression the group has (none while one is under way, none within 10 s of
the last). When it finishes (`RegexResolutionCompleted`, at any later time) each expression
still subscribed takes the topics whose whole name it matches, and the group epoch is bumped if
any changed or if the group's metadata hash differs from the one its last epoch bump recorded
(`ConsumerGroup.metadata_hash`), so the next heartbeat computes a new target. A member
subscribing with an expression that is not resolved yet does not bump the epoch: the resolution
will.

The expression language is RE2/J's (Kafka compiles with `com.google.re2j.Pattern`); the spec
reads a pattern with Python's parser and refuses what RE2 has no form for (look-arounds,
back-references, possessive and atomic groups). A pattern in RE2-only syntax that Python's
parser rejects (`\\Q...\\E`, `\\pN`) is refused here where Kafka accepts it: not modelled.
Topic metadata does not change in the specification, so a resolution's result depends only on
the configured topics; authorization filters nothing (not modelled, §12.13).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import replace
from enum import Enum
from typing import Any

from groupspec.vocabulary.errors import ErrorCode

from ..events import EventNotEnabledError
from .config import ConsumerGroupConfig
from .events import RegexResolutionCompleted
from .rules import (
    CG_REGEX_INVALID,
    CG_REGEX_RESOLUTION_DROPPED,
    CG_REGEX_RESOLUTION_STARTED,
    CG_REGEX_RESOLVED_CHANGED,
    CG_REGEX_RESOLVED_UNCHANGED,
    CG_REGEX_SUBSCRIBED_RESOLVED,
    CG_REGEX_SUBSCRIBED_UNRESOLVED,
    CG_REGEX_TOMBSTONE,
    CG_REGEX_UNSUBSCRIBED,
)
from .state import ConsumerGroup, ConsumerGroupMember, ConsumerGroupsState, ResolvedRegex
from .step import Step

# GroupMetadataManager.REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: no resolution starts within this long
# of the last one.
REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
# lastResolvedRegularExpressionRefreshTimeMs of a group that has resolved nothing (Long.MIN_VALUE).
NEVER_RESOLVED_MS = -(2**63)

# What RE2 has no form for, among what Python's parser accepts (sre opcodes by name).
_NOT_RE2 = frozenset({"ASSERT", "ASSERT_NOT", "GROUPREF", "GROUPREF_EXISTS", "ATOMIC_GROUP"})
_NOT_RE2_REPEATS = frozenset({"POSSESSIVE_REPEAT"})


class RegexUpdate(Enum):
    """UpdateRegularExpressionStatus: what a heartbeat did to the member's expression."""

    NO_CHANGE = "no change"
    UPDATED = "updated"
    UPDATED_AND_RESOLVED = "updated and resolved"

    @property
    def changed_subscription(self) -> bool:
        """Whether the member's subscription changed (regexUpdated)."""
        return self is not RegexUpdate.NO_CHANGE


class InvalidRegex(Exception):
    """A regular expression RE2/J does not compile: INVALID_REGULAR_EXPRESSION."""

    error = ErrorCode.INVALID_REGULAR_EXPRESSION


def compiles_as_re2(pattern: str) -> bool:
    """Whether RE2/J compiles `pattern`, as far as the spec can tell (see the module)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    except (re.error, RecursionError, OverflowError):
        return False
    return not _has_non_re2(parsed)


def _has_non_re2(parsed: Any) -> bool:
    for op, argument in parsed:
        name = str(op)
        if name in _NOT_RE2 or name in _NOT_RE2_REPEATS:
            return True
        for part in argument if isinstance(argument, tuple | list) else (argument,):
            if hasattr(part, "data") and _has_non_re2(part):
                return True
            if isinstance(part, list) and any(hasattr(p, "data") and _has_non_re2(p) for p in part):
                return True
    return False


def matching_topics(config: ConsumerGroupConfig, regex: str) -> tuple[str, ...]:
    """The configured topics whose whole name `regex` matches, sorted (TopicRegexResolver's
    `matcher(topicName).matches()`); none when it does not compile."""
    try:
        compiled = re.compile(regex)
    except re.error:
        return ()
    return tuple(sorted(t.name for t in config.topics if compiled.fullmatch(t.name)))


def last_refresh_ms(group: ConsumerGroup) -> int:
    """When the group last resolved its expressions (every resolution resolves all of them at
    once, so their timestamps agree), or NEVER_RESOLVED_MS."""
    if not group.resolved_regexes:
        return NEVER_RESOLVED_MS
    return group.resolved_regexes[0].timestamp_ms


def awaits_resolution(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Whether the member subscribes with an expression the group has not resolved yet: its
    subscription is not settled, and the group epoch (so the target) waits for the resolution."""
    regex = member.subscribed_topic_regex
    return bool(regex) and group.resolved_regex(regex) is None


def update_regexes(
    step: Step, group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember
) -> tuple[RegexUpdate, ConsumerGroup]:
    """maybeUpdateRegularExpressions: what the member's new expression does to its subscription,
    and the group with its resolutions updated and maybe a resolution started. `group` is the
    group before `updated` replaces `member`. Raises InvalidRegex."""
    old, new = member.subscribed_topic_regex, updated.subscribed_topic_regex
    status = RegexUpdate.NO_CHANGE
    require_refresh = False
    if old != new:
        status = RegexUpdate.UPDATED
        if new and group.regex_subscribers(new) == 0:
            # A new expression is compiled to check it, and a resolution is required.
            if not compiles_as_re2(new):
                step.fire(CG_REGEX_INVALID)
                raise InvalidRegex(new)
            step.fire(CG_REGEX_SUBSCRIBED_UNRESOLVED)
            require_refresh = True
        elif new and group.resolved_regex(new) is not None:
            step.fire(CG_REGEX_SUBSCRIBED_RESOLVED)
            status = RegexUpdate.UPDATED_AND_RESOLVED
        elif new:
            step.fire(CG_REGEX_SUBSCRIBED_UNRESOLVED)
        else:
            step.fire(CG_REGEX_UNSUBSCRIBED)
            status = RegexUpdate.UPDATED_AND_RESOLVED
        if old and group.regex_subscribers(old) == 1:
            step.fire(CG_REGEX_TOMBSTONE)
            group = group.without_resolved_regex(old)
    return status, _maybe_start_resolution(step, group, old, new, require_refresh)


def _maybe_start_resolution(
    step: Step, group: ConsumerGroup, old: str, new: str, require_refresh: bool
) -> ConsumerGroup:
    """The refresh conditions of maybeUpdateRegularExpressions, on the group's counts before the
    member's change, adjusted by it."""
    counts = Counter(m.subscribed_topic_regex for m in group.iter_members())
    counts.pop("", None)
    if not require_refresh and not counts:
        return group
    if group.regex_resolution is not None:
        return group
    last = last_refresh_ms(group)
    if step.now_ms <= last + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
        return group
    if old:
        counts[old] -= 1
    if new:
        counts[new] += 1
    subscribed = tuple(sorted(regex for regex, count in counts.items() if count > 0))
    require_refresh = (
        require_refresh
        or len(subscribed) != len(group.resolved_regexes)
        or step.now_ms > last + step.config.regex_refresh_interval_ms
    )
    if not require_refresh or not subscribed:
        return group
    step.fire(CG_REGEX_RESOLUTION_STARTED)
    return replace(group, regex_resolution=subscribed)


def without_unsubscribed_regexes(step: Step, group: ConsumerGroup) -> ConsumerGroup:
    """maybeDeleteResolvedRegularExpressions: the group without the resolutions no remaining
    member subscribes with (members were removed)."""
    for resolved in group.resolved_regexes:
        if group.regex_subscribers(resolved.regex) == 0:
            step.fire(CG_REGEX_TOMBSTONE)
            group = group.without_resolved_regex(resolved.regex)
    return group


def resolution_pending(state: ConsumerGroupsState) -> tuple[RegexResolutionCompleted, ...]:
    """The resolutions under way, each of which may finish at any time."""
    return tuple(
        RegexResolutionCompleted(group.group_id)
        for group in state.iter_groups()
        if group.regex_resolution is not None
    )


def on_regex_resolved(
    step: Step, state: ConsumerGroupsState, event: RegexResolutionCompleted
) -> ConsumerGroupsState:
    """handleRegularExpressionsResult: each expression still subscribed takes the topics it
    matches; the group epoch is bumped if any expression's topics changed, or if the group's
    metadata hash (what it subscribes to now) differs from the one its last epoch bump recorded:
    an expression tombstoned since then no longer counts."""
    group = state.group(event.group_id)
    if group is None or group.regex_resolution is None:
        raise EventNotEnabledError(f"{event}: no resolution under way")
    regexes = group.regex_resolution
    group = replace(group, regex_resolution=None)
    bump = False
    for regex in regexes:
        if group.regex_subscribers(regex) == 0:
            step.fire(CG_REGEX_RESOLUTION_DROPPED)
            continue
        topics = matching_topics(step.config, regex)
        before = group.resolved_regex(regex)
        if (before.topics if before is not None else ()) != topics:
            step.fire(CG_REGEX_RESOLVED_CHANGED)
            bump = True
        else:
            step.fire(CG_REGEX_RESOLVED_UNCHANGED)
        group = group.with_resolved_regex(ResolvedRegex(regex, topics, step.now_ms))
    if group.computed_metadata_hash(step.config) != group.metadata_hash:
        bump = True
    if bump:
        group = group.with_group_epoch(group.group_epoch + 1, step.config)
    return state.with_group(group)
