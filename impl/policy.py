"""The choices Kafka leaves to the implementation, made by one replaceable object.

Kafka's coordinator decides these by hash-map iteration order, UUIDs and the fate of a disk
write; the specification allows every option. A policy makes them here, so production, tests
and benchmarks differ only in the policy they plug in:

- which member leads after the leader is removed, and at join completion when the leader did
  not rejoin;
- which protocol wins a tied vote;
- the text of a new member id;
- whether an append to `__consumer_offsets` fails, and with which error.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from itertools import count
from typing import Protocol

from groupspec.vocabulary.errors import APPEND_ERRORS, ErrorCode, InvalidConfigError

from .log import LogRecord


class Policy(Protocol):
    """What the coordinator asks whenever Kafka's behaviour is implementation-defined."""

    def leader_after_removal(self, group_id: str, candidates: Sequence[str]) -> str:
        """The next leader among the remaining members (never empty), after the leader left."""
        ...

    def leader_at_join_completion(self, group_id: str, candidates: Sequence[str]) -> str:
        """The leader among the members that rejoined (never empty), when the leader did not."""
        ...

    def protocol_vote_tie(self, group_id: str, tied: Sequence[str]) -> str:
        """The protocol among those tied for most votes (sorted, at least two)."""
        ...

    def new_member_id(self, group_id: str, prefix: str) -> str:
        """A member id never handed out before, conventionally `<prefix>-<unique>`."""
        ...

    def append_error(self, group_id: str, records: Sequence[LogRecord]) -> ErrorCode | None:
        """None if appending `records` succeeds, else the append error (an APPEND_ERRORS code)."""
        ...


class DefaultPolicy:
    """Production choices: the longest-standing candidate, the first tied name, UUID ids,
    appends that succeed (the in-process log never fails)."""

    __slots__ = ()

    def leader_after_removal(self, group_id: str, candidates: Sequence[str]) -> str:
        """The longest-standing remaining member (members keep their join order)."""
        return candidates[0]

    def leader_at_join_completion(self, group_id: str, candidates: Sequence[str]) -> str:
        """The longest-standing member that rejoined."""
        return candidates[0]

    def protocol_vote_tie(self, group_id: str, tied: Sequence[str]) -> str:
        """The alphabetically first tied protocol."""
        return tied[0]

    def new_member_id(self, group_id: str, prefix: str) -> str:
        """`<prefix>-<UUID4>`, as Kafka does."""
        return f"{prefix}-{uuid.uuid4()}"

    def append_error(self, group_id: str, records: Sequence[LogRecord]) -> ErrorCode | None:
        """Every append succeeds."""
        return None


class SequentialIdPolicy(DefaultPolicy):
    """The default choices with reproducible member ids `<prefix>-<n>`, n counting from 0.

    The specification numbers new ids the same way, so a request stream written against one
    runs unchanged against the other (benchmarks, replays).
    """

    __slots__ = ("_next",)

    def __init__(self, start: int = 0) -> None:
        self._next = count(start)

    def new_member_id(self, group_id: str, prefix: str) -> str:
        """`<prefix>-<n>` with a coordinator-wide counter."""
        return f"{prefix}-{next(self._next)}"


class RandomPolicy:
    """Seeded random choices and append failures: exercises every option a harness accepts."""

    __slots__ = ("_failure_rate", "_failures", "_random")

    def __init__(
        self,
        seed: int,
        append_failure_rate: float = 0.0,
        append_failures: Sequence[ErrorCode] = (),
    ) -> None:
        if not 0.0 <= append_failure_rate <= 1.0:
            raise InvalidConfigError(
                f"append_failure_rate must be in [0, 1], got {append_failure_rate}"
            )
        bad = [error for error in append_failures if error not in APPEND_ERRORS]
        if bad:
            raise InvalidConfigError(f"not errors an append can fail with: {bad}")
        if append_failure_rate > 0 and not append_failures:
            raise InvalidConfigError("append_failure_rate > 0 needs at least one append error")
        self._random = random.Random(seed)
        self._failure_rate = append_failure_rate
        self._failures = tuple(append_failures)

    def leader_after_removal(self, group_id: str, candidates: Sequence[str]) -> str:
        """Any remaining member, at random."""
        return self._random.choice(list(candidates))

    def leader_at_join_completion(self, group_id: str, candidates: Sequence[str]) -> str:
        """Any rejoined member, at random."""
        return self._random.choice(list(candidates))

    def protocol_vote_tie(self, group_id: str, tied: Sequence[str]) -> str:
        """Any tied protocol, at random."""
        return self._random.choice(list(tied))

    def new_member_id(self, group_id: str, prefix: str) -> str:
        """`<prefix>-<UUID4 drawn from the seeded generator>`."""
        return f"{prefix}-{uuid.UUID(int=self._random.getrandbits(128), version=4)}"

    def append_error(self, group_id: str, records: Sequence[LogRecord]) -> ErrorCode | None:
        """Fails with probability `append_failure_rate`, with one of the configured errors."""
        if self._failure_rate and self._random.random() < self._failure_rate:
            return self._random.choice(self._failures)
        return None
