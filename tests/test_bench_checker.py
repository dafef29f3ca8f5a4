"""The checker benchmark: it runs, reports sane figures and agrees across worker counts."""

import json

import pytest

from groupspec.bench.checker_bench import (
    QUICK_PRESETS,
    bench_checker,
    format_table,
    parse_preset,
    seen_set_bytes,
)
from groupspec.cli.bench_checker_command import register_bench_checker
from groupspec.cli.main import main


def test_quick_benchmark_reports_sane_fields():
    (bench,) = bench_checker(["two-phase:3"], [1, 2])
    assert bench.consistent
    assert [run.workers for run in bench.runs] == [1, 2]
    for run in bench.runs:
        assert (run.distinct_states, run.verdict, run.depth) == (288, "pass", 10)
        assert run.transitions > run.distinct_states
        assert run.seconds > 0 and run.states_per_s > 0 and run.transitions_per_s > 0
        # A dict slot plus a 64-bit int object per state: tens of bytes, not kilobytes.
        assert 30 < run.bytes_per_state < 1_000
    assert bench.speedup > 0
    table = format_table([bench])
    assert "two-phase:3" in table and "states/s" in table


def test_kip848_presets_are_benchmarked_against_the_yardstick():
    """The KIP-848 presets are in the default list, and a preset other than two-phase commit
    reports its states/s as a fraction of the hand-written search timed in the same run."""
    from groupspec.bench.checker_bench import default_presets

    assert {"kip848-2", "kip848-uniform-2", "kip848-faults-1"} <= set(default_presets())
    (bench,) = bench_checker(["kip848-2"], [1])
    (run,) = bench.runs
    assert (run.distinct_states, run.verdict) == (2683, "pass")
    assert run.baseline_ratio is None and run.yardstick_states_per_s is not None
    assert run.yardstick_states_per_s > 0 and run.yardstick_ratio is not None
    assert run.yardstick_ratio == pytest.approx(run.states_per_s / run.yardstick_states_per_s)
    assert "rate " in format_table([bench])


def test_quick_mode_includes_a_group_preset_and_small_two_phase():
    assert "two-phase:6" in QUICK_PRESETS
    assert any(not spec.startswith("two-phase") for spec in QUICK_PRESETS)


def test_preset_specs():
    assert parse_preset("two-phase:8") == ("two-phase", {"resource_managers": "8"})
    assert parse_preset("static-2") == ("static-2", {})
    with pytest.raises(ValueError, match="only two-phase"):
        parse_preset("static-2:3")


def test_seen_set_bytes_counts_shared_ints_once():
    key = 2**62 + 1
    assert seen_set_bytes({key: None, key + 1: key}) < seen_set_bytes({key: None, key + 1: 2**62})


def run_cli(*argv):
    import argparse

    parser = argparse.ArgumentParser()
    bench = parser.add_subparsers().add_parser("bench").add_subparsers()
    register_bench_checker(bench)
    args = parser.parse_args(["bench", "checker", *argv])
    return args.run(args)


def test_cli_prints_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = run_cli("--preset", "two-phase:3", "--workers", "1", "--json", str(out))
    assert code == 0
    assert "two-phase:3" in capsys.readouterr().out
    document = json.loads(out.read_text())
    (preset,) = document["presets"]
    assert preset["overrides"] == {"resource_managers": "3"}
    assert preset["runs"][0]["distinct_states"] == 288


def test_cli_rejects_bad_input(tmp_path, capsys):
    assert run_cli("--workers", "0") == 2
    assert run_cli("--preset", "eager-2:3") == 2
    assert run_cli("--preset", "no-such-preset", "--workers", "1") == 2
    assert "bench checker" in capsys.readouterr().err
    # Output paths are checked while parsing, before any run.
    assert main(["bench", "checker", "--json", str(tmp_path / "missing" / "x.json")]) == 2
    assert "--json: directory" in capsys.readouterr().err
