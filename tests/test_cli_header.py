"""The header of `check` and `simulate` says what was run: the preset as shipped, or the
`--set`/`--fault` changes with the preset's own values, never the preset's stale description."""

from __future__ import annotations

from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.models.preset_models import load_model


def test_check_with_overrides_shows_the_effective_parameters_not_the_stale_description(capsys):
    stale = load_model("eager-3").description
    assert "no faults" in stale  # what the header must not claim with --fault on
    argv = ["check", "eager-3", "--fault", "KAFKA-12890", "--set", "max_generation=1"]
    assert main([*argv, "--max-states", "50", "--quiet", "--no-liveness"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("eager-3 with max_generation=1 fault=KAFKA-12890 ")
    assert "  max_generation = 1 (preset: 2): bound: " in lines[1]
    assert lines[2] == (
        "  fault = KAFKA-12890 (preset: none): "
        "no pending-sync timer; a follower's SyncGroup may be lost"
    )
    assert stale not in "\n".join(lines)
    assert "no faults" not in "\n".join(lines)


def test_check_prints_the_header_before_the_search(capsys):
    """The header comes first, so a long (or interrupted) run says what it is running."""
    assert main(["check", "two-phase", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"two-phase: {load_model('two-phase').description}"
    assert lines.index("verdict: pass") > 0


def test_a_set_that_keeps_the_preset_value_still_shows_it(capsys):
    argv = ["check", "two-phase", "--set", "resource_managers=3", "--quiet"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("two-phase with resource_managers=3 ")
    assert lines[1] == "  resource_managers = 3 (preset: 3): resource managers (RMs)"


def test_simulate_shows_the_overrides_it_walked(capsys):
    argv = ["simulate", "eager-2", "--set", "evictions=0", "--runs", "1", "--steps", "5"]
    assert main([*argv, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "eager-2 with evictions=0 " in out
    assert "  evictions = 0 (preset: 1): fault budget: " in out
    assert load_model("eager-2").description not in out


def test_validate_names_the_settings_its_set_replaces(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    with trace.open("w") as out:
        write_impl_trace(out, seed=1, duration_ms=60_000, consumers=2)
    argv = ["validate", str(trace), "--no-shrink", "--set", "group_initial_rebalance_delay_ms=0"]
    main(argv)
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "coordinator settings from --set, over each trace header's: "
        "group_initial_rebalance_delay_ms=0"
    )
