"""The report of `groupspec ci` (cli/ci_report.py): report.txt opens with one table of every
kind of divergence across the traces, each row pointing at its first example's details;
report.html holds that table and a sequence diagram per kind, in one file that fetches
nothing."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from test_oracle_shrink import divergent_trace

from groupspec.cli import ci_report
from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.diagrams.sequence_diagram import MESSAGE, render_svg
from groupspec.diagrams.trace_sequence import excerpt_sequence

SECONDS = 1_000


class Page(HTMLParser):
    """What a test needs of report.html: the summary table's rows, the sections of the kinds
    and the SVG in each, and every reference to another resource."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.sections: dict[str, int] = {}  # section id -> SVG elements inside
        self.references: list[str] = []
        self._table = ""
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._section = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table":
            self._table = found.get("id") or ""
        elif tag == "tr" and self._table == "summary" and found.get("class") == "kind":
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "section":
            self._section = found.get("id") or ""
            self.sections[self._section] = 0
        elif tag == "svg" and self._section:
            self.sections[self._section] += 1
        if tag in ("script", "link", "img", "iframe", "object", "embed"):
            self.references.append(tag)
        for name in ("src", "href"):
            value = found.get(name)
            if value is not None and not value.startswith("#"):
                self.references.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = ""
        elif tag == "section":
            self._section = ""

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def validated(tmp_path: Path, traces: list[Path], capsys) -> tuple[Path, str]:
    """`groupspec validate` of the traces, as `groupspec ci` runs it: report.json and the text."""
    report = tmp_path / "report.json"
    capsys.readouterr()
    main(["validate", *map(str, traces), "--json", str(report)])
    return report, capsys.readouterr().out


def test_the_text_report_opens_with_one_table_of_the_kinds_across_traces(tmp_path, capsys):
    traces = [divergent_trace(tmp_path, seed) for seed in (1, 2)]
    conforming = tmp_path / "conforming.jsonl"
    with conforming.open("w") as out:
        write_impl_trace(out, seed=9, duration_ms=20 * SECONDS, consumers=2)
    report, details = validated(tmp_path, [*traces, conforming], capsys)
    text, page = tmp_path / "report.txt", tmp_path / "report.html"
    summary = ci_report.write_reports(report, details, text, page, "groupspec ci: test")
    lines = text.read_text().splitlines()
    document = json.loads(report.read_text())
    kinds = {
        (g["api"], g["kind"], g["field"], g["rule"])
        for v in document["verdicts"]
        for g in v["divergence_groups"]
    }
    assert lines[0].startswith("groupspec ci: 3 traces judged: 1 passed, 2 diverged; ")
    assert lines[0].endswith(f" divergences of {len(kinds)} kinds")
    header = lines[1].split()
    assert header[:8] == [
        "#",
        "API",
        "departure",
        "field",
        "traces",
        "occurrences",
        "first",
        "example",
    ]
    rows = lines[2 : 2 + len(kinds)]
    assert [int(row.split()[0]) for row in rows] == list(range(1, len(kinds) + 1))
    assert lines[2 + len(kinds)] == ""  # the table ends; the details follow
    assert summary == lines[: 2 + len(kinds) + 1]
    occurrences = sum(v["divergence_count"] for v in document["verdicts"])
    assert sum(int(row.split()[5]) for row in rows) == occurrences
    for row in rows:
        cells = row.split()
        api, kind = cells[1], cells[2]
        trace, line = cells[6].rsplit(":", 1)
        assert trace in {t.name for t in traces}
        # The row's details line is where that trace's report details the kind.
        detail = lines[int(cells[8]) - 1]
        assert detail.lstrip().startswith("[") and f"] {api} {kind}" in detail
        assert f"(lines {line}" in detail
    assert details.rstrip("\n") in text.read_text()


def test_the_html_report_has_the_table_and_a_diagram_per_kind_and_fetches_nothing(tmp_path, capsys):
    traces = [divergent_trace(tmp_path, seed) for seed in (1, 2)]
    report, details = validated(tmp_path, traces, capsys)
    text, page = tmp_path / "report.txt", tmp_path / "report.html"
    ci_report.write_reports(report, details, text, page, "groupspec ci: test")
    parsed = Page()
    parsed.feed(page.read_text())
    rows = ci_report.kind_rows(json.loads(report.read_text()))
    assert len(parsed.rows) == len(rows) > 3
    for index, (cells, row) in enumerate(zip(parsed.rows, rows, strict=True), start=1):
        api, kind, field, rule = row.key
        assert cells[:5] == [str(index), api, kind, field or "-", rule or "-"]
        assert cells[5:7] == [str(row.traces), str(row.occurrences)]
        assert cells[7] == f"{row.first.trace.rsplit('/', 1)[-1]}:{row.first.line}"
        assert parsed.sections[f"kind-{index}"] == 1, f"kind {index} has no diagram"
    assert parsed.references == []  # inline CSS and SVG only: viewable offline


def test_ci_against_the_mock_cluster_writes_both_reports(tmp_path):
    out = tmp_path / "out"
    argv = ["ci", "--target", "mock", "--out", str(out), "--no-workloads"]
    probes = ["--probe", "offset-fetch-all", "--probe", "offset-fetch-uncommitted"]
    assert main([*argv, *probes]) == 1
    lines = (out / "report.txt").read_text().splitlines()
    assert lines[0].startswith("groupspec ci: 2 traces judged: 0 passed, 2 diverged; ")
    assert "OffsetFetch" in lines[2] and "OffsetFetch" in lines[3]
    parsed = Page()
    parsed.feed((out / "report.html").read_text())
    assert len(parsed.rows) == 2 and all(parsed.sections.values())


def test_an_excerpt_is_drawn_with_a_lifeline_per_connection_up_to_the_divergence():
    member = "c-1-0f0e6c2a-1b2c-4d5e-8f90-123456789abc"
    join = {"group_id": "g", "member_id": "", "protocol_type": "consumer", "protocols": []}
    joined = {"error_code": 0, "generation_id": 0, "leader": member, "member_id": member}
    excerpt = [
        {"line": 2, "conn": "a:1", "dir": "request", "api": "JoinGroup", "ver": 5, "corr": 1,
         "client_id": "c-1", "body": join},
        {"line": 3, "conn": "b:2", "dir": "request", "api": "Heartbeat", "ver": 3, "corr": 7,
         "client_id": "c-2", "body": {"group_id": "g", "generation_id": 1, "member_id": "x"}},
        {"line": 4, "conn": "a:1", "dir": "response", "api": "JoinGroup", "ver": 5, "corr": 1,
         "body": joined},
        {"line": 5, "conn": "b:2", "dir": "close"},
    ]  # fmt: skip
    allowed = [{**joined, "generation_id": 1}]
    diagram = excerpt_sequence(excerpt, 4, title="t", outcome="o", allowed=allowed, window=2)
    assert [lane.name for lane in diagram.lanes] == ["coordinator", "c-1"]
    # Two events before the divergence are drawn, the first being its request, brought in.
    assert [(e.kind, e.lane, e.origin) for e in diagram.events] == [
        (MESSAGE, 0, 1),
        (MESSAGE, 1, 0),
    ]
    assert diagram.events[-1].text == "L4 JoinGroup #1: NONE, gen 0, leader c-1-0f0e…"
    assert diagram.events[-1].annotation == "▸ allowed: NONE, gen 1, leader c-1-0f0e…"
    assert diagram.events[-1].states == ("", "awaiting sync")
    assert diagram.subtitle == (
        "the excerpt's last 2 of 3 events, lines 2–4 (1 earlier ones not drawn)",
    )
    assert render_svg(diagram) == render_svg(diagram)  # the same excerpt, the same picture
