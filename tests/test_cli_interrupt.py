"""Ctrl-C: `check` and `swarm` print what they did so far, write --json marked incomplete, and
exit 130; every other command exits 130 with one line, never a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from groupspec.checker import check as check_module
from groupspec.checker.bfs import search
from groupspec.checker.interrupt import INTERRUPTED, LIVENESS, SearchInterrupted
from groupspec.cli import check_command, coverage_command, swarm_command
from groupspec.cli.main import EXIT_INTERRUPTED, main
from groupspec.models.preset_models import load_model


def _interrupting_progress(monkeypatch: pytest.MonkeyPatch, after: int) -> None:
    """Make `check`'s progress printer raise KeyboardInterrupt at its `after`-th call."""
    original = check_command._progress_printer

    def printer(loaded, line):  # type: ignore[no-untyped-def]
        show = original(loaded, line)
        calls = []

        def progress(snapshot):  # type: ignore[no-untyped-def]
            show(snapshot)
            calls.append(snapshot)
            if len(calls) == after:
                raise KeyboardInterrupt

        return progress

    monkeypatch.setattr(check_command, "_progress_printer", printer)


def test_ctrl_c_during_check_prints_the_partial_summary_and_writes_it(
    monkeypatch, tmp_path, capsys
):
    _interrupting_progress(monkeypatch, after=4)
    out = tmp_path / "partial.json"
    assert main(["check", "eager-2", "--json", str(out)]) == EXIT_INTERRUPTED
    stdout = capsys.readouterr().out
    assert "verdict: incomplete: interrupted (Ctrl-C)" in stdout
    assert "distinct states: " in stdout and "depth: " in stdout
    assert "rules reached: " in stdout
    assert "Traceback" not in stdout
    document = json.loads(out.read_text())
    assert document["verdict"] == "incomplete"
    assert document["stopped_by"] == INTERRUPTED
    assert document["complete"] is False
    assert 0 < document["distinct_states"] < 29443  # eager-2's full count


def test_ctrl_c_during_the_liveness_check_says_the_search_was_complete(
    monkeypatch, tmp_path, capsys
):
    def interrupted(model, result, halt=None):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(check_module, "check_liveness", interrupted)
    out = tmp_path / "partial.json"
    argv = ["check", "eager-2", "--max-states", "300", "--quiet", "--json", str(out)]
    assert main(argv) == EXIT_INTERRUPTED
    stdout = capsys.readouterr().out
    assert "interrupted during the liveness check (the search was cut short by a limit)" in stdout
    assert "verdict: incomplete (stopped by max_states)" in stdout
    document = json.loads(out.read_text())
    assert document["verdict"] == "incomplete"


def test_an_interrupted_search_raises_with_what_it_explored():
    model = load_model("two-phase").model
    calls = []

    def progress(snapshot):  # type: ignore[no-untyped-def]
        calls.append(snapshot)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(SearchInterrupted) as raised:
        search(model, progress=progress)
    result = raised.value.result
    assert raised.value.phase != LIVENESS
    assert result.stopped_by == INTERRUPTED and not result.complete
    assert result.distinct_states == calls[-1].distinct_states
    assert sum(result.rule_counts.values()) >= 0 and result.transitions > 0


def test_the_first_ctrl_c_stops_the_search_between_batches():
    """A real SIGINT during the search is only recorded: the search stops at the next batch
    boundary (the callback that sent it runs to its end) and keeps a consistent result."""
    # Python's own Ctrl-C handler, as in a process a shell started: a test run earlier in this
    # worker may have left another (PySpark's SparkContext installs one), and the search defers
    # Ctrl-C only over Python's (it leaves anyone else's handler alone).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _first_ctrl_c_stops_between_batches()
    finally:
        signal.signal(signal.SIGINT, previous)


def _first_ctrl_c_stops_between_batches() -> None:
    model = load_model("two-phase").model
    calls = []

    def progress(snapshot):  # type: ignore[no-untyped-def]
        calls.append(snapshot)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
            calls.append("after the signal")  # reached: the signal did not raise here

    with pytest.raises(SearchInterrupted) as raised:
        search(model, progress=progress)
    assert "after the signal" in calls
    assert raised.value.result.distinct_states == calls[-1].distinct_states
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_sigint_to_a_running_check_with_workers(tmp_path):
    """The real thing: SIGINT after the first progress line (workers ignore it; the merging
    process stops them), then the partial summary and exit 130, no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "groupspec.cli.main", "check", "eager-2", "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As a shell starts it. A test run earlier in this worker may have left SIGINT ignored,
        # and an ignored signal stays ignored across exec: the check could not be interrupted.
        preexec_fn=_sigint_as_from_a_shell,
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # the first progress line: the search is running
    assert "states" in first
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == EXIT_INTERRUPTED, stderr
    assert "verdict: incomplete: interrupted (Ctrl-C)" in stdout
    assert "rules reached: " in stdout
    assert "Traceback" not in stderr


def test_ctrl_c_during_swarm_reports_and_writes_what_was_checked(monkeypatch, tmp_path, capsys):
    def interrupted(configurations, *, workers, on_result):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(swarm_command, "check_locally", interrupted)
    out = tmp_path / "swarm.json"
    assert main(["swarm", "--runs", "3", "--json", str(out)]) == EXIT_INTERRUPTED
    stdout = capsys.readouterr().out
    assert "verdict: incomplete" in stdout
    assert "of 0 of 3 configurations: interrupted (Ctrl-C)" in stdout
    document = json.loads(out.read_text())
    assert (document["verdict"], document["interrupted"]) == ("incomplete", True)


def test_ctrl_c_in_any_other_command_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(coverage_command, "measured", interrupted)
    assert main(["coverage", "--preset", "two-phase"]) == EXIT_INTERRUPTED
    captured = capsys.readouterr()
    assert captured.err == "groupspec coverage: interrupted\n"


def _sigint_as_from_a_shell() -> None:
    """In the child before exec: SIGINT's default disposition, which Python turns into its
    KeyboardInterrupt handler at startup."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
