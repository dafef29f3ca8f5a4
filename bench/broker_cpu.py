"""CPU time a broker under load has used, where this machine can see it (Linux's /proc).

On a machine shared with other work, requests/s and latency measure the scheduler as much as the
broker; the broker's CPU time per request does not. Our server is a child process; librdkafka's
mock cluster is a thread of this process (named `rdk:mock`); a broker elsewhere is not visible.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

CpuClock = Callable[[], float | None]
MOCK_THREAD_NAME = "rdk:mock"


def _stat_cpu_s(stat: Path) -> float | None:
    """utime + stime of a /proc stat file, in seconds (None if unreadable)."""
    try:
        text = stat.read_text()
    except OSError:
        return None
    # The command name, in parentheses, may hold spaces; the fields after it are numbers.
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> CpuClock:
    """A clock of the CPU seconds process `pid` has used."""
    return lambda: _stat_cpu_s(Path(f"/proc/{pid}/stat"))


def threads_cpu(name: str) -> CpuClock:
    """A clock of the CPU seconds this process's threads called `name` have used."""

    def clock() -> float | None:
        tasks = Path(f"/proc/{os.getpid()}/task")
        total, seen = 0.0, False
        try:
            entries = list(tasks.iterdir())
        except OSError:
            return None
        for task in entries:
            try:
                if (task / "comm").read_text().strip() != name:
                    continue
            except OSError:
                continue  # the thread ended
            used = _stat_cpu_s(task / "stat")
            if used is not None:
                total, seen = total + used, True
        return total if seen else None

    return clock
