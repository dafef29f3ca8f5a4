"""`groupspec bench stickiness`: both solvers timed in one run, their ratio, and disagreement = exit 1."""

from __future__ import annotations

import json

import groupspec.bench.stickiness_bench as bench
from groupspec.cli.main import main
from groupspec.oracle.assignor.stickiness_problem import StickinessOracleError

SMALL = ["bench", "stickiness", "--members", "3", "--partitions", "12", "--topics", "2"]


def test_small_scenarios_print_both_solvers_and_their_ratio(tmp_path, capsys):
    out_file = tmp_path / "stickiness.json"
    assert main([*SMALL, "--no-suite", "--json", str(out_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["identical", "uneven"]
    for line in lines:
        assert "HiGHS " in line and "; z3 " in line and "z3/HiGHS " in line
    data = json.loads(out_file.read_text())
    assert data["suite"] == []
    for row in data["scenarios"]:
        assert row["highs"]["optimum_moves"] == row["z3"]["optimum_moves"] == row["optimum_moves"]
        assert row["highs"]["error"] is None and row["highs"]["seconds"] >= 0


def test_a_disagreement_between_the_solvers_exits_1(monkeypatch, capsys):
    real = bench.optimal_stickiness_milp

    def off_by_one(group, **kwargs):
        result = real(group, **kwargs)
        return type(result)(**{**result.__dict__, "optimum_moves": result.optimum_moves + 1})

    monkeypatch.setattr(bench, "optimal_stickiness_milp", off_by_one)
    assert main([*SMALL, "--no-suite", "--kind", "uneven"]) == 1
    assert "DISAGREE (HiGHS" in capsys.readouterr().out


def test_an_unsolved_z3_is_reported_with_its_limit_not_a_failure(monkeypatch, capsys):
    def times_out(group, **kwargs):
        raise StickinessOracleError("z3 returned unknown (timeout)")

    monkeypatch.setattr(bench, "optimal_stickiness", times_out)
    assert main([*SMALL, "--no-suite", "--kind", "identical", "--timeout", "7"]) == 0
    out = capsys.readouterr().out
    assert "z3 UNSOLVED within its 7 s limit (z3 returned unknown (timeout))" in out
    assert "z3/HiGHS ≥ " in out
