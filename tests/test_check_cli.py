"""`groupspec check` and `groupspec replay` on the two-phase commit calibration preset."""

import json

from groupspec.checker.check_report import with_digests
from groupspec.cli.main import main


def test_check_passes_with_published_count(tmp_path, capsys):
    out = tmp_path / "result.json"
    assert main(["check", "two-phase", "--quiet", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["verdict"] == "pass"
    assert document["distinct_states"] == 288
    assert document["violations"] == []
    assert set(document["coverage"]["actions"]) == {
        "TMCommit",
        "TMAbort",
        "TMRcvPrepared",
        "RMPrepare",
        "RMChooseToAbort",
        "RMRcvCommitMsg",
        "RMRcvAbortMsg",
    }
    assert "verdict: pass" in capsys.readouterr().out


def test_violation_exits_1_with_counterexample_that_replays(tmp_path, capsys):
    out = tmp_path / "result.json"
    code = main(
        ["check", "two-phase", "--set", "tm_commits_early=true", "--quiet", "--json", str(out)]
    )
    assert code == 1
    printed = capsys.readouterr().out
    assert "invariant Consistent violated" in printed
    assert "  1. RMPrepare(rm1)" in printed
    (violation,) = json.loads(out.read_text())["violations"]
    assert len(violation["trace"]) == 5
    assert main(["replay", str(out)]) == 1
    assert "1/1 violations reproduced" in capsys.readouterr().out


def test_a_liveness_failure_alone_fails_the_verdict(tmp_path, capsys):
    # Safety holds everywhere; only AllDecided fails. A CI job reading the JSON's verdict or
    # the summary's last verdict line must see the failure.
    out = tmp_path / "result.json"
    code = main(
        ["check", "two-phase", "--set", "rm_ignores_abort=true", "--quiet", "--json", str(out)]
    )
    assert code == 1
    printed = capsys.readouterr().out
    assert "liveness AllDecided: fail" in printed
    assert "verdict: fail" in printed
    assert "verdict: pass" not in printed
    document = json.loads(out.read_text())
    assert document["violations"] == []
    assert document["verdict"] == "fail"


def test_workers_and_symmetry_flags(capsys):
    args = ["check", "two-phase", "--set", "resource_managers=4", "--set", "symmetry=true"]
    assert main([*args, "--quiet", "--workers", "2"]) == 0
    assert "workers: 2" in capsys.readouterr().out


def test_limits_give_incomplete_verdict(capsys):
    assert main(["check", "two-phase", "--set", "resource_managers=5", "--max-states", "100"]) == 0
    assert "verdict: incomplete (stopped by max_states)" in capsys.readouterr().out


def test_bad_input_exits_2_naming_the_place(tmp_path, capsys):
    assert main(["check", "two-phase", "--set", "resource_managers=zero"]) == 2
    assert "two-phase.toml: --set resource_managers: expected int" in capsys.readouterr().err
    assert main(["check", "two-phase", "--set", "resource_managers=0"]) == 2
    assert "--set resource_managers: must be between 1 and 1,000, got 0" in capsys.readouterr().err
    # The calibration model's size is bounded like the group world's clients (issue 29).
    assert main(["check", "two-phase", "--set", "resource_managers=100000"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "between 1 and 1,000, got 100000" in error
    assert main(["check", "no-such-preset"]) == 2
    assert "no preset named 'no-such-preset'" in capsys.readouterr().err
    broken = tmp_path / "broken.toml"
    broken.write_text('[model]\nkind = "two-phase"\n[parameters\n')
    assert main(["check", str(broken)]) == 2
    assert "broken.toml: malformed TOML" in capsys.readouterr().err
    assert main(["check", "two-phase", "--workers", "0"]) == 2


def test_replay_rejects_malformed_files(tmp_path, capsys):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    assert main(["replay", str(garbage)]) == 2
    assert "garbage.json: line 1: not JSON" in capsys.readouterr().err
    out = tmp_path / "result.json"
    main(["check", "two-phase", "--set", "tm_commits_early=true", "--quiet", "--json", str(out)])
    document = json.loads(out.read_text())
    document["violations"][0]["trace"][2]["label"] = "TMExplodes"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    assert main(["replay", str(tampered)]) == 2
    assert "'violations' edited after the file was written" in capsys.readouterr().err
    # Digests taken again (as when the model changed since the file was written): the label
    # itself is refused.
    tampered.write_text(json.dumps(with_digests(document)))
    assert main(["replay", str(tampered)]) == 2
    assert "step 3: no enabled step is labelled 'TMExplodes'" in capsys.readouterr().err
