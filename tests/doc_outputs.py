"""The command outputs quoted in docs/checking.md and docs/bugs.md, generated and kept fresh.

A quoted output is a fenced block right after a marker naming the command that prints it:

    <!-- OUTPUT of `groupspec check two-phase` -->
    ```
    $ groupspec check two-phase
    ...
    ```

`python tests/doc_outputs.py --update-doc` runs every marked command and rewrites its block;
`tests/test_doc_outputs.py` runs them again and fails where a block no longer matches, naming
the command. Figures that differ from run to run (seconds, rates, and the progress lines a long
check prints every five seconds) are compared as placeholders, so the comparison is exact about
everything else: the verdict, the counts, the counterexample's steps.

A marker may add, after the command:

- `with stderr`: the block shows stderr too (progress lines, written as a CI log sees them);
- `interrupted after N progress lines`: the command is sent Ctrl-C (SIGINT) once it has printed
  N progress lines, as a user would; its counts then depend on when, so they are placeholders
  too (the block shows the shape of an interrupted check).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = (ROOT / "docs" / "checking.md", ROOT / "docs" / "bugs.md")
MARKER = re.compile(
    r"<!-- OUTPUT of `(?P<command>[^`]+)`(?P<options>[^>]*?)\s*-->\n```(?P<lang>[a-z]*)\n"
    r"(?P<body>.*?)```",
    re.S,
)
_PROGRESS = re.compile(r"^[\w.-]+: [\d,]+ states  [\d,]+ transitions  queue [\d,]+ .*s$")
_RATE = re.compile(r"[\d,]+(\.\d+)? states/s")
_SECONDS = re.compile(r"elapsed: [\d.]+ s")
_COUNT = re.compile(r"\d[\d,]*")


@dataclass(frozen=True)
class Quoted:
    """One marked block: the command, its options, and the text the document quotes."""

    document: Path
    command: str
    with_stderr: bool
    interrupt_after: int | None
    body: str
    start: int
    end: int


def quoted_outputs(document: Path) -> list[Quoted]:
    """The marked blocks of `document`, in order."""
    text = document.read_text(encoding="utf-8")
    found = []
    for match in MARKER.finditer(text):
        options = match.group("options")
        interrupt = re.search(r"interrupted after (\d+) progress lines?", options)
        found.append(
            Quoted(
                document,
                match.group("command"),
                "with stderr" in options,
                int(interrupt.group(1)) if interrupt else None,
                match.group("body"),
                match.start("body"),
                match.end("body"),
            )
        )
    return found


def run(quoted: Quoted) -> str:
    """What the quoted command prints now, as the block shows it (`$ command` first)."""
    words = shlex.split(quoted.command)
    assert words[0] == "groupspec", quoted.command
    argv = [sys.executable, "-m", "groupspec.cli.main", *words[1:]]
    environment = dict(os.environ, COLUMNS="100")
    with tempfile.TemporaryDirectory() as scratch:
        process = subprocess.Popen(
            argv,
            cwd=scratch,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if quoted.with_stderr else subprocess.PIPE,
            text=True,
            env=environment,
            # The default disposition of SIGINT, as a shell gives its commands.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert process.stdout is not None
        lines: list[str] = []
        progress = 0
        for line in process.stdout:
            lines.append(line)
            if quoted.interrupt_after is not None and _PROGRESS.match(line.rstrip("\n")):
                progress += 1
                if progress == quoted.interrupt_after:
                    process.send_signal(signal.SIGINT)
        stderr = process.stderr.read() if process.stderr is not None else ""
        code = process.wait()
    printed = "".join(lines)
    expected = (130,) if quoted.interrupt_after is not None else (0, 1)
    if code not in expected or "Traceback (most recent call last)" in printed + stderr:
        raise RuntimeError(f"`{quoted.command}` exited {code}: {(printed + stderr).strip()}")
    return f"$ {quoted.command}\n" + printed


def normalized(text: str, counts_vary: bool = False) -> list[str]:
    """The lines of an output with the figures that differ from run to run as placeholders
    (every count too, for an interrupted run); progress lines are dropped."""
    result = []
    for line in text.splitlines():
        if _PROGRESS.match(line):
            continue
        line = _SECONDS.sub("elapsed: <s>", _RATE.sub("<rate> states/s", line))
        if counts_vary and not line.startswith("$"):
            line = _COUNT.sub("<n>", line)
        result.append(line.rstrip())
    return result


def stale(quoted: Quoted) -> str | None:
    """None when the block matches what the command prints now, else what differs."""
    counts_vary = quoted.interrupt_after is not None
    now = normalized(run(quoted), counts_vary)
    quoted_lines = normalized(quoted.body, counts_vary)
    if now == quoted_lines:
        return None
    for index, (old, new) in enumerate(zip(quoted_lines, now, strict=False)):
        if old != new:
            return f"line {index + 1}: the document has {old!r}, the command prints {new!r}"
    return f"the document has {len(quoted_lines)} lines, the command prints {len(now)}"


def update(document: Path) -> int:
    """Rewrite every marked block of `document` with what its command prints now."""
    text = document.read_text(encoding="utf-8")
    blocks = quoted_outputs(document)
    for quoted in reversed(blocks):
        text = text[: quoted.start] + run(quoted) + text[quoted.end :]
    document.write_text(text, encoding="utf-8")
    return len(blocks)


def main() -> int:
    """Regenerate the quoted outputs of docs/checking.md and docs/bugs.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update-doc", action="store_true", help="rewrite the blocks")
    args = parser.parse_args()
    for document in DOCUMENTS:
        if args.update_doc:
            count = update(document)
            print(f"{document.relative_to(ROOT)}: {count} outputs regenerated")
        else:
            for quoted in quoted_outputs(document):
                print(f"{document.relative_to(ROOT)}: {quoted.command}: {stale(quoted) or 'fresh'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
