"""The trace explorer (`check --explore`, `groupspec explore`): one self-contained HTML page of a
counterexample, opened in a real headless Chromium (Debian's `chromium`, which `make test`
installs), clicked and read as a person would."""

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from headless_chromium import Page, chromium, chromium_binary, file_url

from groupspec.cli.main import main

CHECK = ["check", "eager-2", "--fault", "KAFKA-2555", "--no-liveness", "--quiet"]
BROWSER = chromium_binary()
needs_chromium = pytest.mark.skipif(
    BROWSER is None, reason="chromium is not installed (make test installs it)"
)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """KAFKA-2555's check result and its explorer page, as `check --json --explore` wrote them."""
    folder = tmp_path_factory.mktemp("explorer")
    result, page = folder / "kafka-2555.json", folder / "kafka-2555.html"
    with redirect_stdout(io.StringIO()) as printed:
        assert main([*CHECK, "--json", str(result), "--explore", str(page)]) == 1
    assert f"trace explorer: {page}" in printed.getvalue()
    return result, page


def _shown(page: Page) -> str:
    return str(page.evaluate("document.querySelector('section.state:not([hidden])').innerText"))


@needs_chromium
def test_clicking_a_step_shows_its_state_and_what_it_changed(written):
    _, path = written
    assert BROWSER is not None
    with chromium(BROWSER) as browser:
        page = browser.open(file_url(path))
        # The page opens on the step that violates the property.
        opened = _shown(page)
        assert opened.startswith("Step 23 of 23: coordinator handles c1 OffsetCommit")
        assert "✗ action NoZombieCommit violated" in opened
        page.click('g.step[data-step="18"]', within="#diagram")
        shown = _shown(page)
        assert shown.startswith(
            "Step 18 of 23: fault timer HeartbeatExpired consumer-0 evicts live consumer-0"
        )
        changed = shown.split("What changed", 1)[1].split("The state after it", 1)[0]
        assert re.search(r"coordinator\.group\s+Stable\s+→\s+Empty", changed)
        assert re.search(r"coordinator\.generation\s+1\s+→\s+2", changed)
        assert re.search(r"budgets\.evictions\s+1\s+→\s+0", changed)
        state = shown.split("The state after it", 1)[1].split("Enabled in this state", 1)[0]
        assert "group: Empty" in state
        assert "members: none" in state
        assert "owned: t-0, t-1" in state  # c1 still believes it owns both partitions
        enabled = shown.split("Enabled in this state", 1)[1]
        assert "coordinator handles c2 JoinGroup(member=-) #2 (taken: step 19)" in enabled
        # The row clicked is the one highlighted in the diagram.
        selected = page.evaluate(
            "Array.from(document.querySelectorAll('g.step.selected')).map(g => g.dataset.step)"
        )
        assert selected == ["18"]
        # What NoZombieCommit judges is highlighted in every state.
        read = page.evaluate(
            "Array.from(document.querySelectorAll('section.state:not([hidden]) .section.read'))"
            ".map(s => s.dataset.section)"
        )
        assert read == ["coordinator", "c1", "c2"]
        page.press("ArrowUp")
        assert _shown(page).startswith("Step 17 of 23: c1 commits t-0@0, t-1@0")
        page.click('g.step[data-step="0"]', within="#diagram")
        assert _shown(page).startswith("Initial state (the run has 23 steps)")
        # Self-contained: the page itself is all it loads, and its script throws nothing.
        assert page.requested_urls() == [file_url(path)]
        assert page.exceptions() == []


def test_the_page_is_self_contained(written):
    _, path = written
    html = path.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<link" not in html and "@import" not in html
    assert html.count('<section class="state"') == 24  # the initial state and 23 steps
    # Alternatives that break a property are flagged where the page is written.
    assert "breaks NoZombieCommit" in html


def test_explore_writes_the_same_page_from_the_json(written, tmp_path):
    result, page = written
    out = tmp_path / "again.html"
    with redirect_stdout(io.StringIO()):
        assert main(["explore", str(result), "--out", str(out)]) == 0
    assert out.read_bytes() == page.read_bytes()
    default = result.with_suffix(".html")
    assert default == page  # the default name: the JSON's, with .html


def test_explore_refuses_what_it_cannot_show(written, tmp_path, capsys):
    result, _ = written
    assert main(["explore", str(result), "--violation", "2", "--out", str(tmp_path / "x")]) == 2
    assert "no violation 2: the file records 1" in capsys.readouterr().err
    passing = tmp_path / "pass.json"
    with redirect_stdout(io.StringIO()):
        assert main(["check", "two-phase", "--quiet", "--json", str(passing)]) == 0
    assert main(["explore", str(passing)]) == 2
    assert "no violation 1: the file records 0" in capsys.readouterr().err
    assert not passing.with_suffix(".html").exists()


def test_check_explore_without_a_counterexample_writes_nothing(tmp_path, capsys):
    page = tmp_path / "page.html"
    assert main(["check", "two-phase", "--quiet", "--explore", str(page)]) == 0
    assert f"no counterexample: {page} not written" in capsys.readouterr().err
    assert not page.exists()


@needs_chromium
def test_a_model_without_a_state_hook_is_explored_too(tmp_path):
    # Two-phase commit has no `describe_state`: its slots are described generically.
    page = tmp_path / "two-phase.html"
    with redirect_stdout(io.StringIO()):
        code = main(
            [
                "check",
                "two-phase",
                "--set",
                "tm_commits_early=true",
                "--quiet",
                "--explore",
                str(page),
            ]
        )
    assert code == 1
    assert BROWSER is not None
    with chromium(BROWSER) as browser:
        opened = browser.open(file_url(page))
        assert _shown(opened).startswith("Step 5 of 5: RMChooseToAbort(rm2)")
        opened.click('g.step[data-step="3"]', within="#diagram")
        shown = _shown(opened)
        assert shown.startswith("Step 3 of 5: TMCommit")
        assert re.search(r"tm\.tm_state\s+init\s+→\s+committed", shown)
        read = opened.evaluate(
            "Array.from(document.querySelectorAll('section.state:not([hidden]) .section.read'))"
            ".map(s => s.dataset.section)"
        )
        assert read == ["rm1", "rm2", "rm3"]


def test_a_liveness_counterexample_shows_its_cycle(tmp_path):
    # AllDecided fails twice: a state from which it is unreachable, then a fair cycle.
    result = tmp_path / "all-decided.json"
    with redirect_stdout(io.StringIO()):
        arguments = ["check", "two-phase", "--set", "rm_ignores_abort=true", "--quiet"]
        assert main([*arguments, "--json", str(result)]) == 1
        assert main(["explore", str(result), "--violation", "1"]) == 0
        unreachable = result.with_suffix(".html").read_text(encoding="utf-8")
        assert main(["explore", str(result), "--violation", "2"]) == 0
        cycle = result.with_suffix(".html").read_text(encoding="utf-8")
    assert "liveness AllDecided violated (goal-unreachable)" in unreachable
    assert "In the cycle that repeats forever." not in unreachable
    assert "liveness AllDecided violated (fair-cycle)" in cycle
    assert "In the cycle that repeats forever." in cycle
    assert "the steps below repeat forever" in cycle  # the diagram's rule above the cycle
