"""One configuration of a swarm: a preset, its `--set` overrides and the budget of its check."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from groupspec.models.swarm_space import Budget


@dataclass(frozen=True)
class Configuration:
    """A configuration drawn from a space: everything its check needs, as plain data.

    `preset` is what `groupspec check` takes (a shipped preset's name or a preset file's path)
    and `overrides` the `--set` options that differ from the preset, in the space's order.
    """

    number: int
    preset: str
    overrides: tuple[tuple[str, str], ...]
    budget: Budget
    liveness: bool = False

    def command(self) -> str:
        """The `groupspec check` command that checks this configuration as the swarm does."""
        words = ["groupspec", "check", self.preset]
        for key, text in self.overrides:
            words += ["--set", f"{key}={text}"]
        if self.budget.max_states is not None:
            words += ["--max-states", str(self.budget.max_states)]
        if self.budget.max_seconds is not None:
            words += ["--max-seconds", f"{self.budget.max_seconds:g}"]
        if not self.liveness:
            words.append("--no-liveness")
        return shlex.join(words)
