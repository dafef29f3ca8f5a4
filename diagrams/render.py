"""Graphviz sources and renderings of the derived state machines and of a tiny state graph.

Sources are written in a fixed order (nodes in the machine's order, edges sorted), so the same
machine always gives the same `.dot` text; `dot` lays it out. Rendering needs Graphviz's `dot`
program (Debian: `apt-get install graphviz`; the Makefile installs it).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from html import escape

import graphviz
import networkx as nx

from .style import FAULT_COLOUR, FONT, UNREACHED_COLOUR, colour_of

GRAPHVIZ_FORMATS = ("svg", "png")


class DotMissingError(RuntimeError):
    """Graphviz's `dot` program is not installed."""


def dot_version() -> str:
    """The installed `dot` program's version line (DotMissingError without it)."""
    executable = shutil.which("dot")
    if executable is None:
        raise DotMissingError(
            "Graphviz's `dot` is not installed (Debian: apt-get install graphviz; "
            "`make run` and `make test` install it)"
        )
    completed = subprocess.run(
        [executable, "-V"], capture_output=True, text=True, check=True, timeout=30
    )
    return (completed.stderr or completed.stdout).strip()


def render(source: str, fmt: str) -> bytes:
    """`source` laid out by `dot` in format `fmt` (svg or png)."""
    if fmt not in GRAPHVIZ_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(GRAPHVIZ_FORMATS)}")
    dot_version()
    return graphviz.Source(source, engine="dot").pipe(format=fmt)


def _node_label(name: str, notes: Sequence[str]) -> str:
    """An HTML-like label: the name, then smaller lines of notes."""
    small = "".join(f'<BR/><FONT POINT-SIZE="9">{escape(line)}</FONT>' for line in notes)
    return f"<<B>{escape(name)}</B>{small}>"


def _count(count: int) -> str:
    return f"{count:,}"


def _edge_label(actions: dict[str, int], faults: frozenset[str], limit: int) -> str:
    """One left-aligned line per action kind, most frequent first; faults marked."""
    ranked = sorted(actions.items(), key=lambda item: (-item[1], item[0]))
    lines = [
        f"{name}{' (fault)' if name in faults else ''} ×{_count(count)}"
        for name, count in ranked[:limit]
    ]
    if len(ranked) > limit:
        rest = sum(count for _, count in ranked[limit:])
        lines.append(f"{len(ranked) - limit} more ×{_count(rest)}")
    return "".join(f"{line}\\l" for line in lines)


def machine_dot(
    graph: nx.DiGraph,
    *,
    name: str,
    title: str,
    caption: Sequence[str],
    node_order: Sequence[str],
    faults: frozenset[str] = frozenset(),
    rankdir: str = "TB",
    node_notes: Mapping[str, str] | None = None,
    same_rank: Sequence[Sequence[str]] = (),
    label_limit: int = 8,
    table: str = "§1",
) -> str:
    """The Graphviz source of a derived machine (see `diagram_graphs`): reached edges solid,
    legal-but-unreached ones dashed, illegal hops red, pseudo states grey and dashed. `table`
    names the legal-transition table the edges are judged by (reference §1 by default)."""
    notes = node_notes or {}
    dot = graphviz.Digraph(name=name)
    dot.attr(
        rankdir=rankdir,
        fontname=FONT,
        fontsize="11",
        labelloc="t",
        labeljust="l",
        label=f"{title}\\l" + "".join(f"{line}\\l" for line in caption),
        nodesep="0.5",
        ranksep="0.55",
        newrank="true",
    )
    dot.attr("node", fontname=FONT, fontsize="12", shape="box", style="rounded,filled")
    dot.attr("edge", fontname=FONT, fontsize="9", arrowsize="0.7")
    for node in node_order:
        data = graph.nodes[node]
        lines = notes[node].split("\n") if node in notes else []
        style = "rounded,filled"
        fontcolor, colour = "black", "black"
        if data.get("kind") == "pseudo":
            style += ",dashed"
            colour = "#777777"
        if not data.get("reached", True):
            style = "rounded,dashed"
            fontcolor = colour = UNREACHED_COLOUR
            lines.append("not reached")
        dot.node(
            node,
            label=_node_label(node, lines),
            style=style,
            fillcolor=colour_of(node),
            color=colour,
            fontcolor=fontcolor,
        )
    for group in same_rank:
        with dot.subgraph() as rank:
            rank.attr(rank="same")
            for node in group:
                rank.node(node)
    edges = sorted(graph.edges(data=True), key=lambda e: (node_order.index(e[0]), e[1]))
    for source, target, data in edges:
        presets = ", ".join(sorted(data.get("presets", ())))
        attributes = {"tooltip": f"{source} → {target}: {presets or 'not reached'}"}
        if not data["reached"]:
            attributes |= {
                "style": "dashed",
                "color": UNREACHED_COLOUR,
                "fontcolor": UNREACHED_COLOUR,
                "label": f"legal in {table},\\lnot reached\\l",
            }
        else:
            attributes["label"] = _edge_label(dict(data["actions"]), faults, label_limit)
            if data["spec"] == "illegal":
                attributes |= {"color": FAULT_COLOUR, "fontcolor": FAULT_COLOUR, "penwidth": "2"}
                attributes["label"] = f"ILLEGAL in {table}\\l" + attributes["label"]
            elif data["spec"] == "outside":
                attributes |= {"color": "#555555", "fontcolor": "#555555"}
        dot.edge(source, target, **attributes)
    return dot.source
