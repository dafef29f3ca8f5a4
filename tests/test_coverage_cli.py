"""`groupspec coverage`: the rule x preset report, its records, and its refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.coverage.presets import known_group_rules, recorded
from groupspec.coverage.profiles import BOTH, DEFENSIVE, every_rule, profile_title
from groupspec.models.preset_models import group_preset_names, load_model
from groupspec.models.presets import PresetError, record_rules_reached
from groupspec.spec.config import KAFKA_3X, KAFKA_VERSIONS
from groupspec.spec.rules import RULES


def test_recorded_report_lists_families_totals_and_what_no_preset_reaches(tmp_path, capsys):
    out = tmp_path / "coverage.json"
    assert main(["coverage", "--recorded", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    coverage = recorded()
    lines = printed.splitlines()
    for version, matrix in coverage.profiles.items():
        title = lines.index(f"{profile_title(version)}: {len(matrix.reached)} presets")
        assert lines[title + 1].split() == ["family", *matrix.reached, "union"]
    assert "never reached, per family" in printed
    document = json.loads(out.read_text())
    assert document["format"] == 2
    assert set(document["presets"]) == set(coverage.reached) == set(group_preset_names())
    assert document["never_reached"] == list(coverage.unreached())
    # every rule is either reached by some preset or listed as never reached
    reached = set().union(*map(set, document["presets"].values()))
    assert reached.isdisjoint(document["never_reached"])
    assert len(reached) + len(document["never_reached"]) == len(every_rule())


def test_every_rule_is_counted_once_profile_by_profile_with_the_defensive_ones_apart(capsys):
    assert main(["coverage", "--recorded"]) == 0
    printed = capsys.readouterr().out
    coverage = recorded()
    # Every coordinator rule of `groupspec rules` is counted in the last line, by kind.
    kinds = coverage.kinds()
    assert sum(known for _, known in kinds.values()) == len(RULES)
    assert set(kinds) == {BOTH, "4.x only", "3.x only", DEFENSIVE}
    # Every profile has a preset, and each profile's own rules are reached by one of them.
    for version, matrix in coverage.profiles.items():
        assert matrix.reached, f"no preset checks the Kafka {version} profile"
        own = {r.rule_id for r in RULES if r.kafka_versions == (version,) and not r.defensive}
        assert own and own <= matrix.union, sorted(own - matrix.union)
        assert matrix.known == known_group_rules(version)
        assert set(matrix.apart) == {r.rule_id for r in RULES if r.defensive}
    assert all(hit == known for kind, (hit, known) in kinds.items() if kind != DEFENSIVE)
    assert coverage.every_rule_line() in printed
    assert f"coordinator {sum(hit for hit, _ in kinds.values())}/{len(RULES)}:" in printed
    # One row of defensive rules per classic profile, and one in the KIP-848 matrix.
    assert printed.count("(defensive)") == len(KAFKA_VERSIONS) + 1


def test_a_profile_no_preset_checks_is_said_so(capsys):
    assert main(["coverage", "--recorded", "--preset", "static-2"]) == 0
    printed = capsys.readouterr().out
    assert f"{profile_title(KAFKA_3X)}: 0 presets" in printed
    assert "no preset checks this profile: none of its rules is reached" in printed
    assert "3.x only 0/5" in printed


def test_the_markdown_table_marks_the_rules_of_another_profile(capsys):
    table = recorded().markdown()
    (row,) = [line for line in table.splitlines() if line.startswith("| join.group_created |")]
    marks = [cell.strip() for cell in row.split("|")[2:-1]]
    names = list(recorded().reached)
    assert marks[names.index("scale-down-kafka-3x")] == "—"
    assert marks[names.index("scale-down")] == "✓"
    assert "| *defensive, apart: not counted* |" in table


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


def test_the_kip848_presets_have_a_matrix_of_their_own(tmp_path, capsys):
    from groupspec.coverage.profiles import KIP848_TITLE
    from groupspec.models.preset_models import kip848_preset_names, kip848_world_rules
    from groupspec.models.presets import MIXED_KIND, preset_names

    kip848_presets = {*kip848_preset_names(), *preset_names(MIXED_KIND)}

    out = tmp_path / "coverage.json"
    assert main(["coverage", "--recorded", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    coverage = recorded()
    assert set(coverage.kip848.reached) == kip848_presets
    assert coverage.kip848.known == kip848_world_rules()
    assert f"{KIP848_TITLE}: {len(kip848_presets)} presets" in printed
    # The classic figures do not count them.
    assert not set(coverage.kip848.reached) & set(coverage.reached)
    document = json.loads(out.read_text())
    assert set(document["kip848"]["presets"]) == kip848_presets
    assert not set(document["kip848"]["never_reached"]) & coverage.kip848.union
