"""Deviation profiles: a named tolerance turns a systematic deviation from a divergence into a
counted, listed tolerated deviation; a bad profile is bad input naming the file and line."""

from __future__ import annotations

import json

import pytest
from test_oracle import heartbeat, join_body, joined, two_members_join
from test_oracle_resync import first_generation_zero, impl_trace

from groupspec.cli.main import main
from groupspec.oracle.trace.oracle import Oracle
from groupspec.oracle.trace.profiles import DeviationProfile
from groupspec.spec.config import CoordinatorConfig
from groupspec.wire.group_apis import HEARTBEAT, JOIN_GROUP, SYNC_GROUP

NO_DELAY = CoordinatorConfig(group_initial_rebalance_delay_ms=0)


def test_first_generation_is_tolerated_counted_and_listed(tmp_path, capsys):
    trace = first_generation_zero(impl_trace(tmp_path / "t.jsonl"), tmp_path / "zero.jsonl")
    report = tmp_path / "r.json"
    argv = ["validate", str(trace), "--no-shrink", "--json", str(report)]
    assert main([*argv, "--tolerate", "first-generation"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "first-generation: × 1 (lines 9)" in out
    verdict = json.loads(report.read_text())["verdicts"][0]
    assert verdict["tolerated"] == [{"name": "first-generation", "count": 1, "lines": [9]}]
    assert verdict["profile"]["tolerate"] == ["first-generation"]
    # Without the tolerance, the same trace diverges there, and the report names it.
    assert main(argv) == 1
    assert "may tolerate it: --tolerate first-generation" in capsys.readouterr().out


def test_no_member_id_required_round_is_tolerated():
    for profile, diverges in (
        (None, True),
        (DeviationProfile().with_tolerance("no-member-id-required"), False),
    ):
        oracle = Oracle(NO_DELAY, profile=profile)
        oracle.request("a", 1, JOIN_GROUP, 9, join_body(), 0, client_id="c")
        oracle.response("a", 1, JOIN_GROUP, 9, joined("c-uuid", "c-uuid", ["c-uuid"]), 1)
        oracle.request("a", 2, HEARTBEAT, 4, heartbeat("c-uuid"), 2)
        oracle.response("a", 2, HEARTBEAT, 4, {"error_code": 0}, 3)
        assert bool(oracle.divergences) is diverges
        assert [t.name for t in oracle.tolerated] == ([] if diverges else ["no-member-id-required"])
        assert [d.tolerable_by for d in oracle.divergences][:1] == (
            ["no-member-id-required"] if diverges else []
        )
    # Tolerated, not required: a coordinator that does the round still passes.
    kept = Oracle(NO_DELAY, profile=DeviationProfile().with_tolerance("no-member-id-required"))
    two_members_join(kept, "c-a-uuid")
    assert not kept.divergences and not kept.tolerated


def follower_sync(oracle: Oracle, answer: int) -> None:
    assignments = [{"member_id": m, "assignment": ""} for m in ("c-a-uuid", "c-b-uuid")]
    sync = {"group_id": "g", "generation_id": 1, "group_instance_id": None}
    oracle.request(
        "a", 3, SYNC_GROUP, 3, {**sync, "member_id": "c-a-uuid", "assignments": assignments}, 10
    )
    oracle.response("a", 3, SYNC_GROUP, 3, {"error_code": 0, "assignment": ""}, 11)
    oracle.request("b", 3, SYNC_GROUP, 3, {**sync, "member_id": "c-b-uuid", "assignments": []}, 12)
    oracle.response("b", 3, SYNC_GROUP, 3, {"error_code": answer, "assignment": ""}, 13)


def test_an_error_substitution_is_tolerated_for_its_api_only():
    invalid_request = 42
    tolerant = DeviationProfile().with_tolerance("error:SyncGroup:INVALID_REQUEST=NONE")
    oracle = Oracle(NO_DELAY, profile=tolerant)
    two_members_join(oracle, "c-a-uuid")
    follower_sync(oracle, invalid_request)
    assert not oracle.divergences
    assert [(t.name, t.api) for t in oracle.tolerated] == [
        ("error:SyncGroup:INVALID_REQUEST=NONE", "SyncGroup")
    ]
    strict = Oracle(
        NO_DELAY, profile=DeviationProfile().with_tolerance("error:Heartbeat:INVALID_REQUEST=NONE")
    )
    two_members_join(strict, "c-a-uuid")
    follower_sync(strict, invalid_request)
    assert [d.api for d in strict.divergences] == ["SyncGroup"] and not strict.tolerated
    # The report names the tolerance that would accept it.
    assert strict.divergences[0].tolerable_by == "error:SyncGroup:INVALID_REQUEST=NONE"


def test_a_toml_profile_selects_tolerances_and_settings(tmp_path, capsys):
    trace = first_generation_zero(impl_trace(tmp_path / "t.jsonl"), tmp_path / "zero.jsonl")
    profile = tmp_path / "broker.toml"
    profile.write_text(
        'name = "zero-based"\ntolerate = ["first-generation"]\n\n[coordinator]\n'
        "group_initial_rebalance_delay_ms = 0\n"
    )
    assert main(["validate", str(trace), "--no-shrink", "--profile", str(profile)]) == 0
    assert (
        "tolerated by profile 'zero-based' (first-generation): 1 deviations"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            'name = "x"\ntolerate = ["first-generation", "no-such"]\n',
            2,
            "unknown tolerance 'no-such'",
        ),
        ('tolerate = ["error:SyncGroup:NOPE=NONE"]\n', 1, "unknown error name 'NOPE'"),
        ('name = "x"\n\n[coordinator]\nno_such_setting = 1\n', 4, "no_such_setting"),
        ('name = "x"\ntolerance = []\n', 2, "unknown key 'tolerance'"),
        ('name = "x"\ntolerate = [,]\nfoo = 1\n', 2, "malformed TOML"),
    ],
)
def test_a_bad_profile_is_bad_input_naming_the_file_and_line(tmp_path, capsys, text, line, message):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"format":"groupspec-trace","version":1}\n')
    profile = tmp_path / "bad.toml"
    profile.write_text(text)
    assert main(["validate", str(trace), "--profile", str(profile)]) == 2
    error = capsys.readouterr().err
    assert str(profile) in error and message in error
    assert f"{profile}:{line}" in error or f"line {line}" in error


def test_an_unknown_tolerance_flag_is_bad_input(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"format":"groupspec-trace","version":1}\n')
    assert main(["validate", str(trace), "--tolerate", "lenient"]) == 2
    assert "--tolerate lenient" in capsys.readouterr().err
