"""The trace explorer: one self-contained HTML page for a counterexample.

The page holds the counterexample's sequence diagram (the one `check --diagram` draws, its rows
clickable), and for every state of the run (the initial state, then the state after each step)
a panel: the step, what it changed from the state before, the whole state (the parts the
violated property reads highlighted, the changed lines marked), and the steps the model enables
in that state, the one the run takes next marked, those that break an action property or lead
to a state that breaks an invariant flagged. Everything is computed when the page is written;
its script only shows the panel of the row clicked (or of the step the arrow keys move to), so
the page needs no network and no server: CSS, SVG and script are inline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from groupspec.checker.derived import invariant_problems, invariants, transitions
from groupspec.checker.describe import (
    ADDED,
    REMOVED,
    Change,
    DescribedRun,
    describe_run,
    description_lines,
    format_value,
    read_sections,
)
from groupspec.checker.model import Model, Transition
from groupspec.checker.replay import ReplayFailed, follow, property_details
from groupspec.models.preset_models import ModelLoadError, load_model

from .sequence_diagram import render_svg
from .sequence_events import ShownViolation, shown_violation, violation_diagram
from .style import FAULT_COLOUR, TIMER_COLOUR


@dataclass(frozen=True)
class Alternative:
    """A step the model enables in a state: its label, whether the run takes it next, the
    action properties it breaks and the invariants the state it leads to breaks."""

    label: str
    taken: bool
    breaks: tuple[str, ...]
    violates: tuple[str, ...]


def alternatives(model: Model[Any], state: Any, taken: Transition[Any] | None) -> list[Alternative]:
    """Every step `model` enables in `state`, in the model's order (`taken`: the step the run
    takes next, None at its end)."""
    found = []
    checked = invariants(model)
    for step in transitions(model, state):
        violated = tuple(
            invariant.name
            for invariant in checked
            if invariant_problems(model, invariant, step.state)
        )
        is_taken = taken is not None and step.label == taken.label and step.state == taken.state
        breaks = tuple(dict.fromkeys(name for name, _ in step.findings))
        found.append(Alternative(step.label, is_taken, breaks, violated))
    return found


class RecordedViolationError(ValueError):
    """A check document's violation cannot be shown (no such violation, or the current code
    cannot follow its trace); the message says which and why."""


@dataclass(frozen=True)
class RecordedViolation:
    """A violation a `check --json` document recorded, replayed with the current code: the run
    to show, and what its property says at the end now (nothing: it no longer fails)."""

    shown: ShownViolation
    details: tuple[str, ...]


def recorded_violations(document: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """The violations of a check document, numbered from 1 in this order: the safety ones, then
    each liveness property's; each as (kind, property, its record)."""
    found = [(v["kind"], v["property"], v) for v in document.get("violations", [])]
    for item in document.get("liveness", []):
        found += [(v["kind"], item["property"], v) for v in item.get("violations", [])]
    return found


def replay_recorded(document: Mapping[str, Any], number: int) -> RecordedViolation:
    """Violation `number` (from 1) of the check document `document`, followed step by step in
    the preset it names with the current code (RecordedViolationError when it cannot be)."""
    violations = recorded_violations(document)
    if not 1 <= number <= len(violations):
        raise RecordedViolationError(f"no violation {number}: the file records {len(violations)}")
    kind, property_name, record = violations[number - 1]
    try:
        loaded = load_model(document["preset_file"], document["overrides"])
    except ModelLoadError as error:
        raise RecordedViolationError(str(error)) from None
    if "stem" in record:
        labels = [*record["stem"], *record["cycle"]]
        cycle_start = len(record["stem"]) + 1 if record["cycle"] else None
    else:
        labels = [step["label"] for step in record["trace"]]
        cycle_start = None
    states = [step.get("state") for step in record.get("trace", [])]
    try:
        initial, steps = follow(loaded.model, labels, states)
    except ReplayFailed as error:
        raise RecordedViolationError(f"violation {number}: {error}") from None
    details: tuple[str, ...] = ()
    if kind in ("invariant", "action", "deadlock"):
        details = property_details(loaded.model, kind, property_name, initial, steps)
    detail = str(record.get("detail", ""))
    shown = shown_violation(loaded.model, initial, steps, kind, property_name, detail, cycle_start)
    return RecordedViolation(shown, details)


def explorer_page(shown: ShownViolation, *, title: str, source: str = "", note: str = "") -> str:
    """The explorer page of the violation `shown` (see the module's docstring); `source` says
    where it comes from (the command or file), shown under the title, and `note` anything the
    reader must know first (that the current code no longer reproduces it, say)."""
    diagram = violation_diagram(shown, title=title)
    svg = render_svg(diagram, interactive=True).split("\n", 1)[1]  # no XML declaration inline
    run = describe_run(shown.model, shown.initial, shown.steps)
    states = [shown.initial, *(step.state for step in shown.steps)]
    panels = []
    for number, state in enumerate(states):
        taken = shown.steps[number] if number < len(shown.steps) else None
        panels.append(
            _panel(shown, run, number, alternatives(shown.model, state, taken), len(states) - 1)
        )
    heading = escape(title)
    data = {
        "steps": len(shown.steps),
        "failing": shown.failing,
        "property": shown.property_name,
        "kind": shown.kind,
    }
    return _PAGE.format(
        title=heading,
        source=(f"<p class='source'>{escape(source)}</p>" if source else "")
        + (f"<p class='outcome'>{escape(note)}</p>" if note else ""),
        outcome=escape(shown.outcome),
        shape=escape(shown.shape),
        svg=svg,
        panels="\n".join(panels),
        data=json.dumps(data).replace("</", "<\\/"),
        fault=FAULT_COLOUR,
        timer=TIMER_COLOUR,
    )


def _panel(
    shown: ShownViolation,
    run: DescribedRun[Any],
    number: int,
    enabled: Sequence[Alternative],
    last: int,
) -> str:
    """The panel of the state after step `number` (0: the initial state)."""
    state = run.state(number)
    changes: tuple[Change, ...] = run.steps[number - 1].changes if number else ()
    if number == shown.failing:
        reads = read_sections(shown.model, state, shown.kind, shown.property_name, changes)
    else:
        reads = read_sections(shown.model, state, shown.kind, shown.property_name)
    if number:
        step = run.steps[number - 1]
        heading = f"Step {number} of {last}: {step.label}"
    else:
        heading = f"Initial state (the run has {last} steps)"
    parts = [f'<section class="state" id="state-{number}" data-step="{number}" hidden>']
    parts.append(f"<h2>{escape(heading)}</h2>")
    if number == shown.failing:
        parts.append(f'<p class="violation">✗ {escape(shown.outcome)}</p>')
    if shown.cycle_start is not None and number >= shown.cycle_start:
        parts.append('<p class="cycle">In the cycle that repeats forever.</p>')
    if number:
        parts.append("<h3>What changed</h3>")
        parts.append(_changes_html(changes))
    parts.append(f"<h3>The state {'after it' if number else ''}</h3>")
    if reads:
        verb = "judges" if shown.kind == "action" else "reads"
        parts.append(
            f'<p class="note">Highlighted: what {escape(shown.property_name)} {verb}'
            f" ({escape(', '.join(reads))}).</p>"
        )
    parts.append(_state_html(state, frozenset(change.path for change in changes), reads))
    parts.append(f"<h3>Enabled in this state ({len(enabled)})</h3>")
    parts.append(_alternatives_html(enabled, number))
    parts.append("</section>")
    return "\n".join(parts)


def _changes_html(changes: Sequence[Change]) -> str:
    if not changes:
        return '<p class="note">Nothing: the step left the state as it was.</p>'
    rows = []
    for change in changes:
        before = "" if change.kind == ADDED else format_value(change.before)
        after = "" if change.kind == REMOVED else format_value(change.after)
        rows.append(
            f'<tr class="{change.kind}"><td class="path">{escape(".".join(change.path))}</td>'
            f'<td class="before">{escape(before)}</td><td class="arrow">→</td>'
            f'<td class="after">{escape(after)}</td></tr>'
        )
    return '<table class="changes">' + "".join(rows) + "</table>"


def _state_html(
    state: Mapping[str, Any], changed: frozenset[tuple[str, ...]], reads: Sequence[str]
) -> str:
    """The state as a tree, one block per section; read sections and changed lines marked."""
    blocks = []
    for name, value in state.items():
        classes = "section read" if name in reads else "section"
        lines = [f'<div class="key">{escape(name)}</div>']
        if isinstance(value, dict) and value:
            for line in description_lines(value, changed, (name,)):
                marked = " changed" if line.changed else ""
                lines.append(
                    f'<div class="line{marked}" style="padding-left:{line.depth * 1.2}em">'
                    f"{escape(line.text)}</div>"
                )
        else:
            marked = " changed" if (name,) in changed else ""
            lines.append(f'<div class="line{marked}">{escape(format_value(value))}</div>')
        blocks.append(
            f'<div class="{classes}" data-section="{escape(name)}">{"".join(lines)}</div>'
        )
    return '<div class="tree">' + "".join(blocks) + "</div>"


def _alternatives_html(enabled: Sequence[Alternative], number: int) -> str:
    if not enabled:
        return '<p class="note">No step is enabled: the run ends here.</p>'
    items = []
    for alternative in enabled:
        notes = []
        if alternative.taken:
            notes.append(f"taken: step {number + 1}")
        if alternative.breaks:
            notes.append("breaks " + ", ".join(alternative.breaks))
        if alternative.violates:
            notes.append("leads to a state violating " + ", ".join(alternative.violates))
        classes = " ".join(
            name
            for name, on in (
                ("taken", alternative.taken),
                ("bad", bool(alternative.breaks or alternative.violates)),
            )
            if on
        )
        note = f' <span class="why">({escape("; ".join(notes))})</span>' if notes else ""
        items.append(f'<li class="{classes}">{escape(alternative.label)}{note}</li>')
    return '<ul class="alternatives">' + "".join(items) + "</ul>"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 0; color: #222; }}
header {{ padding: 10px 16px; border-bottom: 1px solid #ccc; }}
header h1 {{ font-size: 18px; margin: 0 0 4px 0; }}
header p {{ margin: 2px 0; font-size: 13px; }}
header .outcome {{ color: {fault}; font-weight: bold; }}
header .source {{ color: #555; font-family: monospace; }}
header .help {{ color: #555; }}
main {{ display: flex; align-items: flex-start; }}
#diagram {{ flex: 1 1 60%; overflow: auto; height: calc(100vh - 110px); }}
#panel {{ flex: 1 1 40%; min-width: 380px; overflow: auto; height: calc(100vh - 110px);
  border-left: 1px solid #ccc; padding: 0 14px; font-size: 13px; }}
#panel h2 {{ font-size: 15px; margin: 12px 0 6px 0; }}
#panel h3 {{ font-size: 13px; margin: 14px 0 4px 0; color: #444; }}
.violation {{ color: {fault}; font-weight: bold; }}
.cycle {{ color: {fault}; }}
.note {{ color: #555; margin: 2px 0; }}
g.step {{ cursor: pointer; }}
g.step:hover rect.hit {{ fill: {timer}; fill-opacity: 0.06; }}
g.step.selected rect.hit {{ fill: {timer}; fill-opacity: 0.16; }}
table.changes {{ border-collapse: collapse; font-family: monospace; font-size: 12px; }}
table.changes td {{ padding: 1px 6px; vertical-align: top; border-bottom: 1px solid #eee; }}
table.changes td.path {{ color: #444; }}
table.changes tr.added td.after, table.changes tr.changed td.after {{ color: #1a7f37; }}
table.changes tr.removed td.before {{ color: {fault}; text-decoration: line-through; }}
.tree {{ font-family: monospace; font-size: 12px; }}
.section {{ border: 1px solid #ddd; border-radius: 4px; padding: 4px 6px; margin: 4px 0; }}
.section.read {{ background: #fff6d6; border-color: #e0b400; }}
.section .key {{ font-weight: bold; }}
.line.changed {{ color: {fault}; font-weight: bold; }}
ul.alternatives {{ padding-left: 18px; font-family: monospace; font-size: 12px; }}
ul.alternatives li.taken {{ font-weight: bold; }}
ul.alternatives li.bad .why {{ color: {fault}; }}
.why {{ color: #555; }}
</style>
</head>
<body>
<header>
<h1>{title}</h1>
{source}
<p class="outcome">{outcome}</p>
<p>{shape}. <span class="help">Click a step (or a lane's header for the initial state);
the arrow keys move to the previous or next step.</span></p>
</header>
<main>
<div id="diagram">
{svg}
</div>
<div id="panel">
{panels}
</div>
</main>
<script type="application/json" id="trace-data">{data}</script>
<script>
(function () {{
  "use strict";
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var current = null;
  function select(step) {{
    if (step < 0 || step > data.steps) {{ return; }}
    current = step;
    document.querySelectorAll("section.state").forEach(function (section) {{
      section.hidden = Number(section.dataset.step) !== step;
    }});
    document.querySelectorAll("g.step").forEach(function (row) {{
      row.classList.toggle("selected", Number(row.dataset.step) === step);
    }});
    document.getElementById("panel").scrollTop = 0;
    if (window.history && window.history.replaceState) {{
      window.history.replaceState(null, "", "#step-" + step);
    }}
  }}
  document.querySelectorAll("g.step").forEach(function (row) {{
    row.addEventListener("click", function () {{ select(Number(row.dataset.step)); }});
  }});
  document.addEventListener("keydown", function (event) {{
    if (event.key === "ArrowDown" || event.key === "ArrowRight") {{
      select(current + 1); event.preventDefault();
    }} else if (event.key === "ArrowUp" || event.key === "ArrowLeft") {{
      select(current - 1); event.preventDefault();
    }}
  }});
  var wanted = /^#step-(\\d+)$/.exec(window.location.hash);
  select(wanted ? Number(wanted[1]) : (data.failing === null ? 0 : data.failing));
}})();
</script>
</body>
</html>
"""
