"""Progress lines: in place on a terminal, a new line every few seconds in a log (CI), timed
by an injected clock (no wall-clock waits)."""

from __future__ import annotations

import functools
import io
import re

from groupspec.cli import check_command
from groupspec.cli.main import main
from groupspec.cli.output import LOG_INTERVAL_S, ProgressLine


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_new_line_every_interval():
    clock, log = FakeClock(), io.StringIO()
    line = ProgressLine(log, clock=clock)
    assert line.interval_s == LOG_INTERVAL_S <= 5.0  # "every few seconds"
    for second in range(13):
        clock.now = float(second)
        line.update(f"at {second} s")
    line.close()
    assert log.getvalue() == "at 0 s\nat 5 s\nat 10 s\n"


def test_a_terminal_gets_one_line_redrawn_in_place():
    clock, terminal = FakeClock(), Terminal()
    line = ProgressLine(terminal, interval_s=0.5, clock=clock)
    for tenth in range(12):
        clock.now = tenth / 10
        line.update(f"t{tenth}")
    line.close()
    assert terminal.getvalue() == "\r\x1b[2Kt0\r\x1b[2Kt5\r\x1b[2Kt10\n"


def test_force_draws_at_once():
    clock, log = FakeClock(), io.StringIO()
    line = ProgressLine(log, interval_s=60.0, clock=clock)
    line.update("first")
    line.update("skipped")
    line.update("forced", force=True)
    assert log.getvalue() == "first\nforced\n"


def test_check_in_a_log_prints_periodic_lines_with_rate_depth_and_queue(monkeypatch, capsys):
    """`check` piped to a log prints a line per interval; here every update is due."""
    monkeypatch.setattr(
        check_command, "ProgressLine", functools.partial(ProgressLine, interval_s=0.0)
    )
    assert main(["check", "two-phase", "--no-liveness"]) == 0
    progress = capsys.readouterr().err.splitlines()
    assert len(progress) > 1, progress
    shape = re.compile(
        r"^two-phase: [\d,]+ states  [\d,]+ transitions  queue [\d,]+  depth \d+  "
        r"[\d,]+ states/s  [\d,]+ s$"
    )
    assert all(shape.match(line) for line in progress), progress
    states = [int(line.split()[1].replace(",", "")) for line in progress]
    assert states == sorted(states) and states[-1] > states[0]  # not one stale line
