"""The report of `groupspec ci`, for a broker's developer: report.txt opens with one table of
every kind of divergence across all traces (which traces it affects, how often it occurred,
where its first example is), `groupspec validate`'s report of each trace after it; report.html
holds the same table, then each kind with its first example (the response, what the
specification allowed, the group as it held it, the excerpt) and a sequence diagram of the
excerpt around it, in one file that needs nothing else to be viewed.

Both are made from the verdicts `validate --json` wrote (report.json), so the three agree.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.cli.output import write_atomically
from groupspec.diagrams.sequence_diagram import render_svg
from groupspec.diagrams.trace_sequence import excerpt_sequence

# Kinds of divergence are keyed as a baseline keys them (oracle/trace/baseline.py).
KindKey = tuple[str, str, str, str]  # API, kind, field, rule
# Lines of a kind's excerpt report.html shows for each trace but the first example's.
EXCERPT_TAIL = 30
RULE_SHOWN = 48  # characters of the rule the text table shows (report.html shows it whole)
_GROUP_LINE = re.compile(r"^  \[(\d+)\] ")


@dataclass(frozen=True)
class Example:
    """One trace's divergences of a kind: the trace, its group (as report.json has it) and the
    group's number in that trace's text report."""

    trace: str
    group: dict[str, Any]
    number: int

    @property
    def line(self) -> int:
        """The trace line of the first divergence of the kind in this trace."""
        return int(self.group["first_line"])

    @property
    def count(self) -> int:
        """How many divergences of the kind this trace has."""
        return int(self.group["count"])


@dataclass
class KindRow:
    """A kind of divergence across the traces: every trace's example of it, in trace order."""

    key: KindKey
    examples: list[Example] = field(default_factory=list)
    order: int = 0  # where it first appeared, across the traces in order

    @property
    def traces(self) -> int:
        """How many traces show the kind."""
        return len(self.examples)

    @property
    def occurrences(self) -> int:
        """How many divergences of the kind, in all traces."""
        return sum(example.count for example in self.examples)

    @property
    def first(self) -> Example:
        """The first example: the first trace's first divergence of the kind."""
        return self.examples[0]

    @property
    def accepted(self) -> bool | None:
        """Whether the baseline accepts the kind (None without a baseline)."""
        accepted = self.first.group.get("accepted_by_baseline")
        return None if accepted is None else bool(accepted)


def kind_rows(document: dict[str, Any]) -> list[KindRow]:
    """Every kind of divergence in the verdicts of `document` (report.json): new ones first,
    then by the traces they affect, their occurrences and where they first appeared."""
    rows: dict[KindKey, KindRow] = {}
    for verdict in document.get("verdicts", ()):
        for number, group in enumerate(verdict.get("divergence_groups", ()), start=1):
            key = (group["api"], group["kind"], group["field"], group["rule"])
            row = rows.setdefault(key, KindRow(key, order=len(rows)))
            row.examples.append(Example(str(verdict["trace"]), group, number))
    return sorted(
        rows.values(),
        key=lambda r: (bool(r.accepted), -r.traces, -r.occurrences, r.order),
    )


def summary_lines(
    document: dict[str, Any], rows: Sequence[KindRow], details_at: dict[tuple[str, int], int]
) -> list[str]:
    """The table that opens report.txt: a line on the traces, then one row per kind of
    divergence; `details_at` gives the report line where each trace's group is detailed."""
    verdicts = document.get("verdicts", ())
    statuses = [str(v.get("status")) for v in verdicts]
    counted = ", ".join(
        f"{statuses.count(status)} {name}"
        for status, name in (
            ("pass", "passed"),
            ("diverged", "diverged"),
            ("undecided", "undecided"),
        )
        if statuses.count(status) or status != "undecided"
    )
    divergences = sum(int(v.get("divergence_count", 0)) for v in verdicts)
    head = f"groupspec ci: {len(verdicts)} traces judged: {counted}"
    if not rows:
        return [head + "; no divergence", ""]
    head += f"; {divergences} divergences of {len(rows)} kinds"
    baseline = any(row.accepted is not None for row in rows)
    if baseline:
        new = sum(1 for row in rows if not row.accepted)
        head += f" ({new} new, {len(rows) - new} accepted by the baseline)"
    header = ["#", "API", "departure", "field", "traces", "occurrences", "first example"]
    header += ["details"] + (["baseline"] if baseline else []) + ["rule of the allowed response"]
    table = [header]
    for index, row in enumerate(rows, start=1):
        api, kind, field_name, rule = row.key
        first = row.first
        where = details_at.get((first.trace, first.number))
        cells = [
            str(index),
            api,
            kind,
            field_name or "-",
            str(row.traces),
            str(row.occurrences),
            f"{Path(first.trace).name}:{first.line}",
            f"line {where}" if where else "-",
        ]
        if baseline:
            cells.append("accepted" if row.accepted else "NEW")
        cells.append(rule if len(rule) <= RULE_SHOWN else rule[: RULE_SHOWN - 1] + "…")
        table.append(cells)
    widths = [max(len(cells[i]) for cells in table) for i in range(len(header))]
    numeric = {0, 4, 5}
    lines = [head]
    for cells in table:
        padded = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        lines.append("  " + "  ".join(padded).rstrip())
    lines.append("")
    return lines


def details_lines(details: str) -> dict[tuple[str, int], int]:
    """Where `validate`'s text report details each trace's groups: (trace, group number) ->
    line of `details` (1-based)."""
    found: dict[tuple[str, int], int] = {}
    trace = ""
    for number, line in enumerate(details.splitlines(), start=1):
        head = re.match(r"^(\S.*?): (PASS|DIVERGED|UNDECIDED)\b", line)
        if head:
            trace = head.group(1)
        group = _GROUP_LINE.match(line)
        if group and trace:
            found[(trace, int(group.group(1)))] = number
    return found


def report_text(document: dict[str, Any], details: str) -> tuple[str, list[str]]:
    """report.txt: the summary table, then `details` (validate's text report); and the
    summary table's lines."""
    rows = kind_rows(document)
    found = details_lines(details)
    opening = len(summary_lines(document, rows, {})) + 1  # and the heading below
    summary = summary_lines(document, rows, {key: n + opening for key, n in found.items()})
    heading = "the report of each trace (groupspec validate):"
    return "\n".join([*summary, heading, details.rstrip("\n")]) + "\n", summary


def report_html(document: dict[str, Any], title: str) -> str:
    """report.html: the table, each kind with its examples and a sequence diagram around its
    first; self-contained (inline CSS and SVG, no script, nothing fetched)."""
    rows = kind_rows(document)
    summary = summary_lines(document, rows, {})[0]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class='summary'>{_e(summary)}</p>",
        _summary_table(rows),
        _traces_table(document),
    ]
    for index, row in enumerate(rows, start=1):
        parts.append(_kind_section(index, row))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_reports(report_json: Path, details: str, text: Path, page: Path, title: str) -> list[str]:
    """Write report.txt (`text`) and report.html (`page`) from the verdicts in `report_json`
    and validate's text report `details`; the summary table's lines. Without readable
    verdicts, report.txt holds the details alone and no report.html is written."""
    try:
        document = json.loads(report_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        write_atomically(text, details)
        return [f"no summary: cannot read the verdicts in {report_json}: {error}"]
    report, summary = report_text(document, details)
    write_atomically(text, report)
    write_atomically(page, report_html(document, title))
    return summary


# -- report.html ----------------------------------------------------------------------------


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _kind_name(key: KindKey) -> str:
    api, kind, field_name, _ = key
    return f"{api} {kind}" + (f", field {field_name}" if field_name else "")


def _summary_table(rows: Sequence[KindRow]) -> str:
    if not rows:
        return "<p>No divergence: every trace passed.</p>"
    baseline = any(row.accepted is not None for row in rows)
    head = ["#", "API", "departure", "field", "rule of the allowed response", "traces"]
    head += ["occurrences", "first example"] + (["baseline"] if baseline else [])
    lines = ['<table id="summary"><thead><tr>']
    lines += [f"<th>{_e(name)}</th>" for name in head]
    lines.append("</tr></thead><tbody>")
    for index, row in enumerate(rows, start=1):
        api, kind, field_name, rule = row.key
        first = row.first
        cells = [
            f'<a href="#kind-{index}">{index}</a>',
            _e(api),
            _e(kind),
            f"<code>{_e(field_name or '-')}</code>",
            f"<code>{_e(rule or '-')}</code>",
            str(row.traces),
            str(row.occurrences),
            f'<a href="#kind-{index}">{_e(Path(first.trace).name)}:{first.line}</a>',
        ]
        if baseline:
            cells.append("accepted" if row.accepted else "<strong>new</strong>")
        lines.append(
            f'<tr class="kind" id="row-{index}">'
            + "".join(f"<td>{c}</td>" for c in cells)
            + "</tr>"
        )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _traces_table(document: dict[str, Any]) -> str:
    lines = ["<h2>Traces</h2>", '<table id="traces"><thead><tr>']
    for name in ("trace", "verdict", "events", "judged", "divergences", "kinds"):
        lines.append(f"<th>{name}</th>")
    lines.append("</tr></thead><tbody>")
    for verdict in document.get("verdicts", ()):
        lines.append(
            "<tr>"
            + "".join(
                f"<td>{_e(cell)}</td>"
                for cell in (
                    Path(str(verdict["trace"])).name,
                    verdict.get("status"),
                    verdict.get("events"),
                    f"{float(verdict.get('judged_fraction', 1.0)):.1%}",
                    verdict.get("divergence_count"),
                    len(verdict.get("divergence_groups", ())),
                )
            )
            + "</tr>"
        )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _kind_section(index: int, row: KindRow) -> str:
    first = row.first
    group = first.group
    divergence = group["first"]
    shrink = group.get("excerpt_shrink") or {}
    parts = [
        f'<section class="kind" id="kind-{index}">',
        f"<h2>{index}. {_e(_kind_name(row.key))}</h2>",
        f"<p>Rule of the allowed response: <code>{_e(row.key[3] or '-')}</code>. "
        f"{row.occurrences} occurrences in {row.traces} traces.</p>",
        f"<h3>First example: {_e(Path(first.trace).name)}, line {first.line}</h3>",
        f"<p>{_e(divergence['api'])} v{_e(divergence['ver'])} response to "
        f"{_e(divergence['conn'])}#{_e(divergence['corr'])}: {_e(divergence['reason'])}</p>",
        _bodies(divergence),
        _diagram(index, row),
    ]
    if divergence.get("state"):
        parts.append(
            "<p>The specification's state before the response:</p>"
            f"<pre>{_e(divergence['state'])}</pre>"
        )
    if divergence.get("resync"):
        parts.append(f"<p>Resynchronized: {_e(divergence['resync'])}</p>")
    if divergence.get("tolerable_by"):
        parts.append(
            f"<p>A deviation profile may tolerate it: {_e(divergence['tolerable_by'])}</p>"
        )
    status = shrink.get("status", "not shrunk")
    why = f": {shrink['why']}" if shrink.get("why") else ""
    excerpt = group.get("excerpt", ())
    parts.append(
        f'<details class="excerpt"{" open" if len(excerpt) <= EXCERPT_TAIL else ""}>'
        f"<summary>Excerpt: {len(excerpt)} lines, {_e(status)}{_e(why)}</summary>"
        f"<pre>{_e(chr(10).join(excerpt))}</pre></details>"
    )
    if len(row.examples) > 1:
        parts.append("<h3>In the other traces</h3><ul>")
        for example in row.examples[1:]:
            lines = example.group.get("lines", ())
            shown = ", ".join(str(n) for n in lines[:10]) + (", …" if len(lines) > 10 else "")
            tail = list(example.group.get("excerpt", ()))[-EXCERPT_TAIL:]
            parts.append(
                f"<li>{_e(Path(example.trace).name)}: × {example.count} (lines {_e(shown)})"
                f"<details><summary>the last {len(tail)} lines of its excerpt</summary>"
                f"<pre>{_e(chr(10).join(tail))}</pre></details></li>"
            )
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _bodies(divergence: dict[str, Any]) -> str:
    rows = []
    if divergence.get("observed") is not None:
        rows.append(("observed", divergence["observed"]))
    rows += [("allowed", body) for body in divergence.get("allowed", ())]
    cells = "".join(
        f"<tr><th>{name}</th><td><pre>{_e(json.dumps(body, indent=1))}</pre></td></tr>"
        for name, body in rows
    )
    return f'<table class="bodies">{cells}</table>' if cells else ""


def _diagram(index: int, row: KindRow) -> str:
    """The first example's excerpt around the divergence, as inline SVG (its marker ids made
    the kind's own, for several diagrams in one page)."""
    group = row.first.group
    excerpt = [json.loads(line) for line in group.get("excerpt", ())]
    divergence = group["first"]
    outcome = f"line {divergence['line']}: {divergence['reason']}"
    try:
        diagram = excerpt_sequence(
            excerpt,
            int(divergence["line"]),
            title=f"{index}. {_kind_name(row.key)} ({Path(row.first.trace).name})",
            outcome=outcome,
            allowed=divergence.get("allowed", ()),
        )
    except ValueError as error:
        return f"<p>No diagram: {_e(error)}</p>"
    svg = render_svg(diagram).split("\n", 1)[1]  # without the XML declaration
    svg = svg.replace('id="arrow"', f'id="arrow-{index}"').replace(
        "url(#arrow)", f"url(#arrow-{index})"
    )
    return f'<figure class="diagram">{svg}</figure>'


_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code, pre { font-family: Menlo, Consolas, monospace; font-size: 12px; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; }
section.kind { border-top: 2px solid #888; margin-top: 2em; }
figure.diagram { overflow-x: auto; margin: 1em 0; }
details.excerpt pre, li pre { background: #f8f8f8; padding: 6px; }
p.summary { font-weight: bold; }
"""
