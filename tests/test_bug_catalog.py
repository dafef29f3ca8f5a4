"""The bug catalog: every fault switch is rediscovered, and the same bounds pass without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.checker.bfs import Limits, search
from groupspec.checker.views import ModelView
from groupspec.cli.bugs_command import with_results_table
from groupspec.cli.main import main
from groupspec.models.bugs import BUGS, Bug, BugRun, run_bug
from groupspec.models.preset_models import ModelLoadError, load_model


# A finding's check is long (static-failover-fenced: about 300,000 states); the catalog run of
# test_bugs_command_prints_the_table_and_docs_bugs_md_is_current checks it is found, with its
# states and length (the generated table), so it is not run twice.
@pytest.mark.parametrize("bug", [b for b in BUGS if not b.finding], ids=lambda bug: bug.name)
def test_each_bug_is_found_with_its_property_and_length(bug: Bug) -> None:
    run = run_bug(bug)
    assert run.failed == (bug.property_name,)
    assert run.length == bug.counterexample_length


# A bug found with a preset's own bounds needs no run here: the preset test explores that
# preset exhaustively without faults already.
@pytest.mark.parametrize(
    "bug",
    [b for b in BUGS if b.fault and set(b.overrides) - {"check_convergence"}],
    ids=lambda bug: bug.name,
)
def test_same_bounds_pass_without_the_fault(bug: Bug) -> None:
    overrides = {k: v for k, v in bug.overrides.items() if k != "check_convergence"}
    loaded = load_model(bug.preset, overrides)
    model = loaded.model
    if bug.name in CANDIDATE_RACE_BOUNDS:
        model = ModelView(model, judging=frozenset({bug.property_name}))
    result = search(model, workers=1, limits=Limits())
    assert not result.problems


# Two KIP-848 consumers and a leave: the correct world already breaks NoRunAgainstOwner there,
# by the candidate race of docs/kip-848.md ("OwnedOnce fails"), so without the fault it is the
# bug's own property that must hold in every state.
CANDIDATE_RACE_BOUNDS = frozenset({"KAFKA-16147", "KAFKA-19449"})


def test_the_candidate_race_is_why_those_bounds_are_judged_by_one_property() -> None:
    bug = next(b for b in BUGS if b.name in CANDIDATE_RACE_BOUNDS)
    overrides = {k: v for k, v in bug.overrides.items() if k != "check_convergence"}
    result = search(load_model(bug.preset, overrides).model, workers=1, limits=Limits())
    assert {found.problem.property_name for found in result.problems} == {"NoRunAgainstOwner"}


def test_unknown_fault_is_rejected_with_the_known_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "eager-2", "--fault", "KAFKA-0"]) == 2
    err = capsys.readouterr().err
    assert "unknown fault 'KAFKA-0'" in err and "KIP-429" in err
    with pytest.raises(ModelLoadError, match="unknown fault"):
        load_model("eager-2", {"fault": "nope"})


def test_check_with_fault_finds_the_bug() -> None:
    assert main(["check", "cooperative-3", "--set", "clients=2", "--fault", "KIP-429"]) == 1


BUGS_DOC = Path(__file__).resolve().parent.parent / "docs" / "bugs.md"


def test_bugs_command_prints_the_table_and_docs_bugs_md_is_current(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One run of the catalog: the printed table, and the generated table of docs/bugs.md."""
    copy = tmp_path / "bugs.md"
    copy.write_text(BUGS_DOC.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["bugs", "--update-doc", str(copy)]) == 0
    out = capsys.readouterr().out
    for bug in BUGS:
        assert bug.name in out
    assert "NO (" not in out
    assert copy.read_text(encoding="utf-8") == BUGS_DOC.read_text(encoding="utf-8"), (
        "docs/bugs.md is stale: run `groupspec bugs --update-doc docs/bugs.md`"
    )


def test_a_stale_results_table_is_rewritten() -> None:
    runs = [BugRun(bug, (bug.property_name,), 7, bug.counterexample_length, 0.0) for bug in BUGS]
    text = BUGS_DOC.read_text(encoding="utf-8")
    fresh = with_results_table(text, runs)
    assert "| 7 |" in fresh and fresh != text
    assert with_results_table(fresh, runs) == fresh
    with pytest.raises(ValueError, match="markers"):
        with_results_table("no markers here", runs)


def test_update_doc_needs_the_markers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.md"
    plain.write_text("# nothing generated here\n", encoding="utf-8")
    assert main(["bugs", "--update-doc", str(plain)]) == 2
    assert "markers" in capsys.readouterr().err


def test_bugs_list_prints_the_catalog_without_running_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import groupspec.cli.bugs_command as bugs_command

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("--list ran a check")

    monkeypatch.setattr(bugs_command, "run_bug", no_run)
    out = tmp_path / "catalog.json"
    assert main(["bugs", "--list", "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["bug", "fault"]
    assert len(lines) == 1 + len(BUGS)
    for bug, line in zip(BUGS, lines[1:], strict=True):
        assert line.startswith(bug.name) and bug.property_name in line and bug.preset in line
    listed = json.loads(out.read_text())
    assert [entry["bug"] for entry in listed] == [bug.name for bug in BUGS]
    assert main(["bugs", "--list", "--update-doc", str(BUGS_DOC)]) == 2
    assert "run without --list" in capsys.readouterr().err
