"""Message-sequence diagrams as plain SVG text, written by this module (no layout engine).

A diagram has one lifeline per participant (the coordinator first, then each client) and one
row per step of a run, top to bottom:

- a message (a request the coordinator handles, a response a client reads) is an arrow drawn
  in the row where its receiver takes it in, labelled above; the step that queued it says
  "sends …";
- a step of one participant alone (a poll, a heartbeat, a commit request) is a dot on its
  lifeline with its text beside it; a timer is a blue box, a fault a red one;
- an annotation "▸ …" says what the step changed (the group's state and generation, a
  client's phase and the partitions it owns), and each lifeline is coloured by the state it is
  in, with a legend at the bottom;
- a counterexample marks the step where the violation is found (a red band and ✗) and, below
  the violated property, draws the state that property reads after that step: one column per
  part of the state, the lines the failing step changed in bold red.

`render_svg(..., interactive=True)` also makes every row a clickable group (`class="step"`,
`data-step` its number; the lane headers are step 0, the initial state), for the trace
explorer's page.

Everything is placed on a fixed grid from the step list alone, and numbers are written as
integers, so the same run always gives byte-identical SVG (the docs' freshness test relies on
that). Text widths are estimated from character counts; labels sit on a white backing so a
lifeline crossing them stays readable.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from html import escape

from groupspec.checker.check_report import VIOLATION_MARK

from .style import FAULT_COLOUR, TIMER_COLOUR, colour_of

MESSAGE = "message"
LOCAL = "local"
TIMER = "timer"
FAULT = "fault"
NOTE = "note"
KINDS = (MESSAGE, LOCAL, TIMER, FAULT, NOTE)

FONT_FAMILY = "Helvetica, Arial, sans-serif"
FONT_SIZE = 11
CHAR_WIDTH = 6.1  # average advance of an 11px sans-serif character
ROW = 26
MIN_LANE_GAP = 300
LEFT = 46  # step numbers
MIN_ANNOTATION_WIDTH = 160  # room left of the first lifeline for its annotations
MIN_RIGHT = 330  # room right of the last lifeline for its texts
HEADER = 46
MARK_BAND = 20
BAR = 8
PANEL_LINE = 14
PANEL_CHARS = 64  # a panel line longer than this wraps
PANEL_INDENT = 12  # per level of a panel line
PANEL_GAP = 24
FAILING_FILL = "#fbeaea"


@dataclass(frozen=True)
class Lane:
    """A participant: its name and a line saying what it is."""

    name: str
    detail: str = ""


@dataclass(frozen=True)
class SequenceEvent:
    """One step of a run as the diagram draws it.

    `lane` is where the step happens (a message's receiver); `origin` is a message's sender.
    `annotation` says what changed ("" if nothing worth showing); `states` is the state of
    every lane after the step, for colouring the lifelines.
    """

    kind: str
    lane: int
    text: str
    states: tuple[str, ...]
    origin: int | None = None
    annotation: str = ""
    annotation_lane: int | None = None


@dataclass(frozen=True)
class PanelSection:
    """One part of a state drawn under a counterexample: its name and its lines, each with its
    indentation depth and whether the failing step changed it."""

    name: str
    lines: tuple[tuple[int, str, bool], ...]


@dataclass(frozen=True)
class SequenceDiagram:
    """A whole diagram: title, the lanes and their initial states, the events, an outcome; for
    a counterexample, the failing step (numbered from 1) and the state its property reads."""

    title: str
    subtitle: tuple[str, ...]
    lanes: tuple[Lane, ...]
    initial_states: tuple[str, ...]
    events: tuple[SequenceEvent, ...]
    outcome: str = ""
    cycle_start: int | None = None
    # (row index, text): a dashed rule under that row, e.g. where a milestone was reached
    marks: tuple[tuple[int, str], ...] = ()
    failing_step: int | None = None
    panel_title: str = ""
    panel: tuple[PanelSection, ...] = ()


def _width(text: str, size: int = FONT_SIZE) -> int:
    return int(len(text) * CHAR_WIDTH * size / FONT_SIZE) + 6


def _text(
    x: int,
    y: int,
    text: str,
    *,
    anchor: str = "start",
    size: int = FONT_SIZE,
    colour: str = "#000000",
    weight: str = "normal",
    backed: bool = False,
) -> str:
    """An SVG text element, optionally on a white box (estimated width) so lines behind it
    do not strike it through."""
    parts = []
    if backed:
        width = _width(text, size)
        left = {"start": x - 2, "middle": x - width // 2, "end": x - width + 2}[anchor]
        parts.append(
            f'<rect x="{left}" y="{y - size}" width="{width}" height="{size + 4}" '
            f'fill="#ffffff" fill-opacity="0.9"/>'
        )
    parts.append(
        f'<text x="{x}" y="{y}" text-anchor="{anchor}" font-size="{size}" '
        f'fill="{colour}" font-weight="{weight}">{escape(text)}</text>'
    )
    return "".join(parts)


class _Layout:
    """Coordinates of lanes and rows."""

    def __init__(self, diagram: SequenceDiagram) -> None:
        self.diagram = diagram
        self.top = 24 + 16 * (1 + len(diagram.subtitle)) + 14
        self.first_row = self.top + HEADER + 22
        lanes = len(diagram.lanes)
        # Lanes are spaced so that every text fits between its lifeline and the next one.
        self.gap, self.annotation_width = MIN_LANE_GAP, MIN_ANNOTATION_WIDTH
        right = MIN_RIGHT
        for event in diagram.events:
            needed = _room_needed(event)
            if event.kind == MESSAGE and event.origin is not None:
                span = abs(event.lane - event.origin)
                self.gap = max(self.gap, (_width(event.text) + 40 + span - 1) // span)
            lane = event.lane if event.annotation_lane is None else event.annotation_lane
            if event.annotation and lane == 0 and event.kind != LOCAL:
                self.annotation_width = max(self.annotation_width, _width(event.annotation) + 24)
            elif event.lane == lanes - 1:
                right = max(right, needed)
            else:
                self.gap = max(self.gap, needed)
        self.width = LEFT + self.annotation_width + self.gap * (lanes - 1) + right
        self.marked_rows = sorted(row for row, _ in diagram.marks)
        if diagram.cycle_start is not None:
            self.marked_rows.append(diagram.cycle_start - 1)
        self.rows_end = self.y(len(diagram.events))

    def x(self, lane: int) -> int:
        """The horizontal position of a lane's lifeline."""
        return LEFT + self.annotation_width + self.gap * lane

    def y(self, row: int) -> int:
        """The vertical position of a row (an event)."""
        # Each mark adds a band below its row, for its rule and text.
        bands = sum(1 for marked in self.marked_rows if marked < row)
        return self.first_row + ROW * row + MARK_BAND * bands


def _room_needed(event: SequenceEvent) -> int:
    """Width an event's own texts take to the right of its lifeline."""
    width = 14
    if event.kind in (LOCAL, TIMER, FAULT):
        width += _width(event.text) + 6
    if event.annotation:
        width += _width(event.annotation, FONT_SIZE + 1)
    return width + 24


def render_svg(diagram: SequenceDiagram, *, interactive: bool = False) -> str:
    """The diagram as a standalone SVG document (deterministic text); `interactive` makes each
    row a clickable group (see the module's docstring)."""
    layout = _Layout(diagram)
    body: list[str] = []
    body += _title(diagram)
    if diagram.failing_step:
        # Under the lifelines, so their colours still show through the band.
        y = layout.y(diagram.failing_step - 1)
        body.append(
            f'<rect x="4" y="{y - ROW // 2}" width="{layout.width - 8}" height="{ROW}" '
            f'fill="{FAILING_FILL}" stroke="{FAULT_COLOUR}" stroke-dasharray="3,2"/>'
        )
    body += _lifelines(diagram, layout)
    headers = _headers(diagram, layout)
    body += _clickable(0, headers, layout, layout.top, HEADER) if interactive else headers
    for row, text in diagram.marks:
        body += _band(layout, row, text, "#999999", "#666666")
    if diagram.cycle_start is not None:
        text = "the steps below repeat forever: a fair cycle that never reaches the goal"
        body += _band(layout, diagram.cycle_start - 1, text, FAULT_COLOUR, FAULT_COLOUR)
    for row, event in enumerate(diagram.events):
        parts = _event(diagram, layout, row, event)
        if interactive:
            parts = _clickable(row + 1, parts, layout, layout.y(row) - ROW // 2, ROW)
        body += parts
    footer_y = layout.rows_end + 10
    if diagram.outcome:
        body.append(_text(12, footer_y + 14, diagram.outcome, colour=FAULT_COLOUR, weight="bold"))
        footer_y += 22
    panel, footer_y = _panel(diagram, layout, footer_y)
    body += panel
    legend, footer_y = _legend(diagram, layout, footer_y + 10)
    body += legend
    height = footer_y + 16
    width = max(layout.width, _panel_width(diagram))
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT_FAMILY}">\n'
        f"<title>{escape(diagram.title)}</title>\n"
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'fill="#333333"/></marker></defs>\n'
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>\n'
    )
    return head + "\n".join(body) + "\n</svg>\n"


def _clickable(step: int, parts: list[str], layout: _Layout, top: int, height: int) -> list[str]:
    """`parts` in a group the explorer's page selects by `data-step`, over an invisible
    full-width rectangle that takes the clicks."""
    return [
        f'<g class="step" data-step="{step}">',
        f'<rect class="hit" x="0" y="{top}" width="{layout.width}" height="{height}" '
        'fill="#ffffff" fill-opacity="0" pointer-events="all"/>',
        *parts,
        "</g>",
    ]


def _wrapped(text: str) -> list[str]:
    """A panel line wrapped at PANEL_CHARS, between words where it can."""
    return textwrap.wrap(text, PANEL_CHARS, break_on_hyphens=False) or [""]


def _section_width(section: PanelSection) -> int:
    widths = [_width(section.name + ":")] + [
        PANEL_INDENT * (depth + (index > 0)) + _width(piece)
        for depth, text, _ in section.lines
        for index, piece in enumerate(_wrapped(text))
    ]
    return max(widths) + PANEL_GAP


def _panel_width(diagram: SequenceDiagram) -> int:
    """The width the widest panel section needs (so a narrow diagram grows to hold it)."""
    return max((12 + _section_width(section) + 12 for section in diagram.panel), default=0)


def _panel(diagram: SequenceDiagram, layout: _Layout, y: int) -> tuple[list[str], int]:
    """The state the violated property reads: a title, then one column per section, packed
    left to right and wrapped onto a new band when the diagram's width is used up."""
    if not diagram.panel:
        return [], y
    parts = [_text(12, y + 14, diagram.panel_title, colour=FAULT_COLOUR)]
    y += 22
    width = max(layout.width, _panel_width(diagram))
    x, band_height = 12, 0
    for section in diagram.panel:
        column = _section_width(section)
        if x > 12 and x + column > width - 12:
            x, y, band_height = 12, y + band_height + 10, 0
        lines = [_text(x, y + 12, section.name + ":", weight="bold")]
        row = 1
        for depth, text, changed in section.lines:
            colour, weight = (FAULT_COLOUR, "bold") if changed else ("#222222", "normal")
            for index, piece in enumerate(_wrapped(text)):
                # SVG collapses leading spaces: depth is an offset; continuations go further.
                left = x + PANEL_INDENT * (depth + 1 + (index > 0))
                lines.append(
                    _text(left, y + 12 + PANEL_LINE * row, piece, colour=colour, weight=weight)
                )
                row += 1
        parts += lines
        band_height = max(band_height, PANEL_LINE * row + 4)
        x += column
    return parts, y + band_height


def _band(layout: _Layout, row: int, text: str, line: str, colour: str) -> list[str]:
    """A dashed rule with a caption in the band below `row` (-1: above the first row)."""
    y = layout.y(row) + ROW // 2 + 2
    return [
        f'<line x1="{LEFT - 6}" y1="{y}" x2="{layout.width - 8}" y2="{y}" stroke="{line}" '
        'stroke-dasharray="4,3"/>',
        _text(LEFT - 6, y + 12, text, size=10, colour=colour, backed=True),
    ]


def _title(diagram: SequenceDiagram) -> list[str]:
    lines = [_text(12, 24, diagram.title, size=15, weight="bold")]
    for number, line in enumerate(diagram.subtitle, start=1):
        lines.append(_text(12, 24 + 16 * number, line, colour="#444444"))
    return lines


def _headers(diagram: SequenceDiagram, layout: _Layout) -> list[str]:
    parts = []
    for index, lane in enumerate(diagram.lanes):
        x = layout.x(index)
        width = max(_width(lane.name, 13), _width(lane.detail, 10), 90) + 12
        parts.append(
            f'<rect x="{x - width // 2}" y="{layout.top}" width="{width}" height="{HEADER - 8}" '
            f'rx="6" fill="#f7f7f7" stroke="#555555"/>'
        )
        parts.append(_text(x, layout.top + 16, lane.name, anchor="middle", size=13, weight="bold"))
        if lane.detail:
            parts.append(
                _text(x, layout.top + 31, lane.detail, anchor="middle", size=10, colour="#444444")
            )
    return parts


def _lifelines(diagram: SequenceDiagram, layout: _Layout) -> list[str]:
    """Each lifeline as coloured segments: the lane's state from one row to the next."""
    parts = []
    start = layout.top + HEADER - 8
    for lane in range(len(diagram.lanes)):
        x = layout.x(lane)
        parts.append(
            f'<line x1="{x}" y1="{start}" x2="{x}" y2="{layout.rows_end}" stroke="#888888"/>'
        )
        state, segment_top = diagram.initial_states[lane], start
        for row, event in enumerate(diagram.events):
            if event.states[lane] != state:
                boundary = layout.y(row)
                parts.append(_segment(x, segment_top, boundary, state))
                state, segment_top = event.states[lane], boundary
        parts.append(_segment(x, segment_top, layout.rows_end, state))
    return parts


def _segment(x: int, top: int, bottom: int, state: str) -> str:
    return (
        f'<rect x="{x - BAR // 2}" y="{top}" width="{BAR}" height="{max(bottom - top, 1)}" '
        f'fill="{colour_of(state)}" stroke="#777777" stroke-width="0.6"><title>{escape(state)}'
        "</title></rect>"
    )


def _event(diagram: SequenceDiagram, layout: _Layout, row: int, event: SequenceEvent) -> list[str]:
    y = layout.y(row)
    x = layout.x(event.lane)
    if diagram.failing_step == row + 1:
        number = f"{VIOLATION_MARK} {row + 1}"
        parts = [_text(LEFT - 10, y + 4, number, anchor="end", colour=FAULT_COLOUR, weight="bold")]
    else:
        parts = [_text(LEFT - 10, y + 4, str(row + 1), anchor="end", colour="#777777")]
    if event.kind == MESSAGE and event.origin is not None:
        start = layout.x(event.origin)
        direction = 1 if x > start else -1
        parts.append(
            f'<line x1="{start + direction * (BAR // 2)}" y1="{y}" '
            f'x2="{x - direction * (BAR // 2 + 1)}" y2="{y}" stroke="#333333" '
            'stroke-width="1.2" marker-end="url(#arrow)"/>'
        )
        parts.append(_text((start + x) // 2, y - 4, event.text, anchor="middle", backed=True))
        text_end = x + BAR
    elif event.kind == NOTE:
        left, right = layout.x(0) - 40, layout.x(len(diagram.lanes) - 1) + 40
        parts.append(
            f'<rect x="{left}" y="{y - 9}" width="{right - left}" height="16" rx="3" '
            f'fill="#fbeaea" stroke="{FAULT_COLOUR}"/>'
        )
        parts.append(
            _text((left + right) // 2, y + 3, event.text, anchor="middle", colour=FAULT_COLOUR)
        )
        text_end = right
    else:
        colour = {TIMER: TIMER_COLOUR, FAULT: FAULT_COLOUR}.get(event.kind, "#222222")
        if event.kind == LOCAL:
            parts.append(f'<circle cx="{x}" cy="{y}" r="4" fill="{colour}"/>')
        else:
            parts.append(
                f'<rect x="{x - 9}" y="{y - 8}" width="18" height="16" rx="2" fill="#ffffff" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
        parts.append(_text(x + 14, y + 4, event.text, colour=colour, backed=True))
        text_end = x + 14 + _width(event.text)
    if event.annotation:
        lane = event.lane if event.annotation_lane is None else event.annotation_lane
        ax = layout.x(lane)
        if lane == 0:
            parts.append(
                _text(ax - 12, y + 4, event.annotation, anchor="end", weight="bold", backed=True)
            )
        else:
            start = max(ax + 12, text_end + 6) if lane == event.lane else ax + 12
            parts.append(_text(start, y + 4, event.annotation, weight="bold", backed=True))
    return parts


def _legend(diagram: SequenceDiagram, layout: _Layout, y: int) -> tuple[list[str], int]:
    """Swatches for every state a lifeline shows (in order of first appearance), then marks."""
    seen: list[str] = []
    for states in (diagram.initial_states, *(event.states for event in diagram.events)):
        for state in states:
            if state and state not in seen:
                seen.append(state)
    items = [(f"{state}", colour_of(state), "swatch") for state in seen]
    items += [
        ("a step of that participant alone", "#222222", "●"),
        ("timer", TIMER_COLOUR, "■"),
        ("fault", FAULT_COLOUR, "■"),
        ("what the step changed", "#000000", "▸"),
    ]
    parts = [_text(12, y + 10, "legend:", colour="#444444")]
    x = 70
    for text, colour, mark in items:
        width = _width(text) + 34
        if x + width > layout.width - 12:
            x, y = 70, y + 20
        if mark == "swatch":
            parts.append(
                f'<rect x="{x}" y="{y}" width="14" height="12" fill="{colour}" '
                'stroke="#777777" stroke-width="0.6"/>'
            )
        else:
            parts.append(_text(x + 2, y + 10, mark, colour=colour, weight="bold"))
        parts.append(_text(x + 18, y + 10, text, colour="#444444"))
        x += width
    return parts, y + 14


def validate(diagram: SequenceDiagram) -> None:
    """Raise ValueError when events name unknown lanes or kinds (a builder bug)."""
    lanes = len(diagram.lanes)
    if len(diagram.initial_states) != lanes:
        raise ValueError("one initial state per lane")
    for number, event in enumerate(diagram.events, start=1):
        if event.kind not in KINDS:
            raise ValueError(f"event {number}: unknown kind {event.kind!r}")
        if not 0 <= event.lane < lanes or len(event.states) != lanes:
            raise ValueError(f"event {number}: lane or states do not match the lanes")
        if event.kind == MESSAGE and (event.origin is None or not 0 <= event.origin < lanes):
            raise ValueError(f"event {number}: a message needs an origin lane")
    if diagram.failing_step is not None and not 0 <= diagram.failing_step <= len(diagram.events):
        raise ValueError(f"failing step {diagram.failing_step} is not a step of the run")
