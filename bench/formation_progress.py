"""Where group formation stands, so a formation timeout can say where it stopped."""

from __future__ import annotations

from collections import Counter

SETUP = "setup"


class FormationProgress:
    """What the setup and each member wait for, so a timeout can say where formation stopped."""

    def __init__(self) -> None:
        self._waiting: dict[str, str] = {}
        self._last_answer: dict[str, str] = {}
        self._formed: set[str] = set()

    def waiting(self, who: str, what: str) -> None:
        """`who` (a member, or SETUP) now waits for `what` (e.g. "a JoinGroup v5 response")."""
        self._waiting[who] = what
        self._formed.discard(who)

    def answered(self, who: str, answer: str) -> None:
        """`who` got `answer`, an error it retries; the summary repeats the latest."""
        self._last_answer[who] = answer

    def done(self, who: str) -> None:
        """`who` is formed (or the setup is done): nothing to wait for."""
        self._waiting.pop(who, None)
        if who != SETUP:
            self._formed.add(who)

    def summary(self, members: int) -> str:
        """One line: how many formed, what the rest wait for, the last answer one retried."""
        parts = [f"{len(self._formed)} of {members} members formed"]
        if SETUP in self._waiting:
            parts.append(f"the setup waits for {self._waiting[SETUP]}")
        waits = Counter(what for who, what in self._waiting.items() if who != SETUP)
        parts += [f"{count} waiting for {what}" for what, count in sorted(waits.items())]
        example = next((who for who in self._waiting if who in self._last_answer), None)
        if example is not None:
            parts.append(f"{example}'s last answer: {self._last_answer[example]}")
        return "; ".join(parts)
