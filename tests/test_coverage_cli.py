"""`groupspec coverage`: the rule x preset report, its records, and its refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.coverage.presets import recorded
from groupspec.models.preset_models import load_model
from groupspec.models.presets import PresetError, record_rules_reached


def test_recorded_report_lists_families_totals_and_what_no_preset_reaches(tmp_path, capsys):
    out = tmp_path / "coverage.json"
    assert main(["coverage", "--recorded", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    matrix = recorded()
    assert printed.splitlines()[0].split() == ["family", *matrix.reached, "union"]
    assert f"coordinator {matrix.as_json()['totals']['coordinator']['reached']}/" in printed  # type: ignore[index]
    assert "never reached, per family" in printed
    document = json.loads(out.read_text())
    assert document["format"] == 1
    assert set(document["presets"]) == set(matrix.reached)
    assert document["never_reached"] == list(matrix.unreached())
    # every rule is either reached by some preset or listed as never reached
    reached = set().union(*map(set, document["presets"].values()))
    assert reached.isdisjoint(document["never_reached"])
    assert len(reached) + len(document["never_reached"]) == len(matrix.known)


def test_verbose_names_every_unreached_rule(capsys):
    assert main(["coverage", "--recorded", "--verbose"]) == 0
    printed = capsys.readouterr().out
    for rule_id in recorded().unreached():
        assert rule_id in printed


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--record", "--recorded"], "cannot take --recorded"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--preset", "no-such-preset", "--recorded"], "no-such-preset"),
        (["--recorded", "--update-doc", "missing.md"], "missing.md: no such file"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_them(
    options, message, capsys, monkeypatch, tmp_path
):
    monkeypatch.chdir(tmp_path)
    assert main(["coverage", *options]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_a_directory_as_json_output_is_refused_before_any_check(tmp_path, capsys):
    assert main(["coverage", "--preset", "static-2", "--json", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "is a directory" in captured.err
    assert "states" not in captured.err  # no check ran


def _copy_of_static_2(tmp_path: Path) -> Path:
    copy = tmp_path / "static-2.toml"
    shutil.copy(load_model("static-2").path, copy)
    return copy


def test_a_check_that_reaches_its_record_exits_0(tmp_path, capsys):
    copy = _copy_of_static_2(tmp_path)
    assert main(["coverage", "--preset", str(copy)]) == 0
    assert "no longer reaches" not in capsys.readouterr().out


def test_a_lost_rule_and_an_unrecorded_rule_exit_1_naming_both(tmp_path, capsys):
    copy = _copy_of_static_2(tmp_path)
    rules = set(load_model(copy).expected.rules_reached or ())  # type: ignore[union-attr]
    lost = "heartbeat.accepted"
    assert lost in rules
    record_rules_reached(copy, (rules - {lost}) | {"delete.unknown_group"})
    assert main(["coverage", "--preset", str(copy)]) == 1
    printed = capsys.readouterr().out
    assert "no longer reaches delete.unknown_group" in printed
    assert f"now also reaches {lost}" in printed


def test_record_rewrites_only_the_rules_list(tmp_path, capsys):
    copy = _copy_of_static_2(tmp_path)
    original = copy.read_text()
    rules = load_model(copy).expected.rules_reached  # type: ignore[union-attr]
    record_rules_reached(copy, ["heartbeat.accepted"])
    assert load_model(copy).expected.rules_reached == ("heartbeat.accepted",)  # type: ignore[union-attr]
    assert main(["coverage", "--preset", str(copy), "--record"]) == 0
    assert "recorded the rules of 1 presets" in capsys.readouterr().out
    assert copy.read_text() == original
    assert load_model(copy).expected.rules_reached == rules  # type: ignore[union-attr]


def test_record_refuses_a_preset_whose_expected_table_is_not_last(tmp_path):
    copy = _copy_of_static_2(tmp_path)
    copy.write_text(copy.read_text() + "\n[extra]\nkey = 1\n")
    before = copy.read_text()
    with pytest.raises(PresetError, match="last table"):
        record_rules_reached(copy, ["heartbeat.accepted"])
    assert copy.read_text() == before
