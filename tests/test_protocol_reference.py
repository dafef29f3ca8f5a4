"""Every `§` citation in the sources and docs names a numbered heading of docs/protocol.md.

A citation is `§` followed by a section number (`§2.2.5`, `§8.` with the full stop not part of
it), possibly in a list (`§1, §2.2.2`, each cited on its own) or a range (`§5.2-6`, `§7–8`,
`§2.0–§2.8`: every section from the first to the last). A heading resolves a section when its
text starts with that number (`#### 2.2.5 Known member id`, `## 0. Constants`).
"""

from __future__ import annotations

import re
from pathlib import Path

from layers import FOLDERS

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_DOC = ROOT / "docs" / "protocol.md"
SOURCE_DIRS = FOLDERS  # every package folder (tests/layers.py)
TEXT_SUFFIXES = {".py", ".toml", ".md", ".txt", ".properties", ".yml", ".yaml"}

_NUMBER = r"\d+(?:\.\d+)*"
CITATION = re.compile(rf"§\s?(?P<first>{_NUMBER})(?:\s?[-–]\s?§?(?P<last>{_NUMBER}))?")
HEADING = re.compile(rf"^#{{1,6}}\s+(?P<number>{_NUMBER})\.?(?:\s|$)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _split(number):
    return tuple(int(part) for part in number.split("."))


def _join(parts):
    return ".".join(str(part) for part in parts)


def cited_sections(text):
    """The section numbers `text` cites, in order, ranges expanded."""
    sections = []
    for match in CITATION.finditer(text):
        first = _split(match["first"])
        if match["last"] is None:
            sections.append(_join(first))
            continue
        last = _split(match["last"])
        if len(last) < len(first):
            # "§5.2-6": the end replaces the trailing parts of the start (5.6).
            last = first[: len(first) - len(last)] + last
        if len(first) == len(last) and first[:-1] == last[:-1] and first[-1] <= last[-1]:
            prefix = first[:-1]
            sections.extend(_join((*prefix, n)) for n in range(first[-1], last[-1] + 1))
        else:
            sections.extend((_join(first), _join(last)))
    return sections


def heading_numbers(markdown):
    """The numbers that start headings of `markdown`, outside fenced code blocks."""
    numbers = []
    in_fence = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            numbers.append(match["number"])
    return numbers


def resolves(section, headings):
    """Whether a heading numbered `section` exists (`2.0` and `2.00` are not the same)."""
    return section in headings


def citing_files():
    """The files whose citations must resolve: sources, docs/*.md but protocol.md, README.md."""
    files = []
    for directory in SOURCE_DIRS:
        for path in sorted((ROOT / directory).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    files.extend(p for p in sorted((ROOT / "docs").glob("*.md")) if p != PROTOCOL_DOC)
    files.append(ROOT / "README.md")
    return files


def citations():
    """Every (file:line, section) cited by the citing files."""
    found = []
    for path in citing_files():
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if "§" not in line:
                continue
            place = f"{path.relative_to(ROOT)}:{number}"
            found.extend((place, section) for section in cited_sections(line))
    return found


def _protocol_headings():
    return set(heading_numbers(PROTOCOL_DOC.read_text(encoding="utf-8")))


def test_every_citation_resolves_to_a_heading_of_protocol_md():
    headings = _protocol_headings()
    found = citations()
    # Hundreds of citations exist; finding almost none means the scan itself broke.
    assert len(found) > 200, f"only {len(found)} citations found: is the scan broken?"
    missing = [
        f"{place}: §{section} is not a heading of docs/protocol.md"
        for place, section in found
        if not resolves(section, headings)
    ]
    assert not missing, "\n".join(missing)


def test_protocol_md_cross_references_resolve():
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    headings = set(heading_numbers(text))
    missing = [
        f"docs/protocol.md:{number}: §{section}"
        for number, line in enumerate(text.splitlines(), start=1)
        for section in cited_sections(line)
        if not resolves(section, headings)
    ]
    assert not missing, "\n".join(missing)


def test_numbered_headings_are_unique():
    numbers = heading_numbers(PROTOCOL_DOC.read_text(encoding="utf-8"))
    repeated = sorted({n for n in numbers if numbers.count(n) > 1})
    assert not repeated, f"docs/protocol.md numbers several headings {repeated}"


def test_a_fabricated_citation_does_not_resolve():
    headings = _protocol_headings()
    assert cited_sections("as reference §99.9 says") == ["99.9"]
    assert not resolves("99.9", headings)
    assert resolves("2.2.5", headings)


def test_lists_ranges_and_punctuation_are_parsed():
    assert cited_sections('"§1, §2.2.2"') == ["1", "2.2.2"]
    assert cited_sections("reference §8.") == ["8"]
    assert cited_sections("(§3 step 5)") == ["3"]
    assert cited_sections("§5.2-6") == ["5.2", "5.3", "5.4", "5.5", "5.6"]
    assert cited_sections("reference §7–8.") == ["7", "8"]
    assert cited_sections("§2.0–§2.8") == [f"2.{n}" for n in range(9)]
    assert cited_sections("no citation here") == []


def test_headings_are_read_from_markdown_only():
    markdown = "## 0. Constants\n#### 2.2.5 Known member\n```\n## 9.9 in code\n```\n3.1 prose\n"
    assert heading_numbers(markdown) == ["0", "2.2.5"]
