"""A real headless Chromium driven over the Chrome DevTools protocol, for tests of pages.

Chromium is Debian's `chromium` package (the Makefile's chromium stamp installs it). It is
started with `--remote-debugging-pipe`: it reads protocol messages from file descriptor 3 and
writes to 4, each a JSON object ended by a NUL byte, so no port is opened and no library is
needed. It runs with a fresh profile in a temporary directory and with everything that would
reach the network switched off (the machine's network is closed anyway).

`Chromium.open(url)` gives a `Page`: evaluate JavaScript in it, click an element with real mouse
events at its place on the screen, press a key, and read the events the page caused (requests,
uncaught exceptions).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
    "--window-size=1400,900",
)
# Fixed by Chromium's --remote-debugging-pipe: it reads commands on 3 and answers on 4.
_COMMANDS_FD, _ANSWERS_FD = 3, 4


def chromium_binary() -> str | None:
    """The Chromium executable on PATH (Debian: `chromium`), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, or went away."""


@dataclass
class Chromium:
    """A running Chromium and the two pipes to it."""

    process: subprocess.Popen[bytes]
    commands: Any
    answers: Any
    events: list[dict[str, Any]] = field(default_factory=list)
    _next_id: int = 0
    _buffer: bytes = b""

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.commands.write(json.dumps(message).encode() + b"\0")
        self.commands.flush()
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method: str, session: str = "") -> dict[str, Any]:
        """The first event `method` (of `session`) not yet seen, waiting for it if need be."""
        for index, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId", "") == session:
                return self.events.pop(index)
        while True:
            event = self._read()
            if event.get("method") == method and event.get("sessionId", "") == session:
                return event
            self.events.append(event)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self.answers.fileno(), 65536)
            if not chunk:
                raise BrowserError(f"chromium closed its pipe (exit {self.process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(message))

    def open(self, url: str) -> Page:
        """A new tab showing `url`, once its load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send("Page.navigate", {"url": url}, session)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session)


@dataclass
class Page:
    """One tab of a `Chromium`."""

    browser: Chromium
    session: str

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (BrowserError if it throws)."""
        result = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            self.session,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str, within: str = "") -> None:
        """Click the element `selector` with the mouse, as a person would: scrolled into view,
        pressed and released at a point inside it (and inside `within`'s visible box, when the
        element is wider than that scrolling container), which must be the element's."""
        point = self.evaluate(
            f"""(() => {{
                const element = document.querySelector({json.dumps(selector)});
                if (!element) {{ return null; }}
                element.scrollIntoView({{block: "center", inline: "nearest"}});
                const box = element.getBoundingClientRect();
                const frame = {json.dumps(within)}
                    ? document.querySelector({json.dumps(within)}).getBoundingClientRect()
                    : {{left: 0, right: window.innerWidth}};
                const x = Math.max(box.left, frame.left) + 12;
                const y = box.top + box.height / 2;
                const hit = document.elementFromPoint(x, y);
                return {{x: x, y: y, inside: element.contains(hit)}};
            }})()"""
        )
        if point is None:
            raise BrowserError(f"no element matches {selector}")
        if not point["inside"]:
            raise BrowserError(f"{selector} is covered at the point a person would click")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.browser.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": point["x"], "y": point["y"], "button": "left", "clickCount": 1},
                self.session,
            )

    def press(self, key: str) -> None:
        """Press and release a key that has a DOM key name (ArrowUp, ArrowDown, ...)."""
        codes = {"ArrowUp": 38, "ArrowDown": 40, "ArrowLeft": 37, "ArrowRight": 39}
        for kind in ("rawKeyDown", "keyUp"):
            self.browser.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": codes[key]},
                self.session,
            )

    def requested_urls(self) -> list[str]:
        """Every URL the page requested so far (from the Network domain's events)."""
        self.evaluate("0")  # let pending events arrive
        return [
            event["params"]["request"]["url"]
            for event in self.browser.events
            if event.get("method") == "Network.requestWillBeSent"
            and event.get("sessionId") == self.session
        ]

    def exceptions(self) -> list[str]:
        """The uncaught exceptions the page's scripts threw so far."""
        self.evaluate("0")
        return [
            str(event["params"]["exceptionDetails"])
            for event in self.browser.events
            if event.get("method") == "Runtime.exceptionThrown"
            and event.get("sessionId") == self.session
        ]


def _child_pipes(commands: int, answers: int) -> None:
    """In the child: its ends of the pipes at the descriptors Chromium expects."""
    os.dup2(commands, _COMMANDS_FD)
    os.dup2(answers, _ANSWERS_FD)


@contextmanager
def chromium(binary: str) -> Iterator[Chromium]:
    """A headless Chromium with a fresh profile, closed (and its profile removed) on exit."""
    # Our ends and Chromium's ends; Chromium's are moved above 4 first so that putting them at
    # 3 and 4 in the child cannot overwrite one with the other.
    to_chromium_read, to_chromium_write = os.pipe()
    from_chromium_read, from_chromium_write = os.pipe()
    child_read = fcntl.fcntl(to_chromium_read, fcntl.F_DUPFD, _ANSWERS_FD + 1)
    child_write = fcntl.fcntl(from_chromium_write, fcntl.F_DUPFD, _ANSWERS_FD + 1)
    with tempfile.TemporaryDirectory(prefix="groupspec-chromium-") as profile:
        process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(_COMMANDS_FD, _ANSWERS_FD),
            preexec_fn=lambda: _child_pipes(child_read, child_write),
        )
        for descriptor in (to_chromium_read, from_chromium_write, child_read, child_write):
            os.close(descriptor)
        commands = os.fdopen(to_chromium_write, "wb")
        answers = os.fdopen(from_chromium_read, "rb")
        browser = Chromium(process, commands, answers)
        try:
            yield browser
        finally:
            try:
                browser.send("Browser.close")
            except (BrowserError, OSError):
                process.kill()
            commands.close()
            answers.close()
            process.wait()


def file_url(path: Path) -> str:
    """The file:// URL of a local file."""
    return path.resolve().as_uri()
