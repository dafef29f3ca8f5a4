"""A recording proxy on its own event-loop thread, for programs that are not asyncio (the
workloads, the tests): start it, point clients at its port, stop it, read the trace."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import IO

from groupspec.wire.trace_format import TraceHeader, TraceWriter

from .proxy import ProxyConfig, RecordingProxy
from .recording import TraceSink

START_TIMEOUT_S = 30.0


class RecorderThread:
    """`RecordingProxy(config)` writing the trace `out` (replaced), on a background thread."""

    def __init__(self, config: ProxyConfig, out: Path, header: TraceHeader) -> None:
        self.config = config
        self.out = out
        self.header = header
        self.proxy: RecordingProxy | None = None
        self.sink: TraceSink | None = None
        self._file: IO[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port clients connect to."""
        assert self.proxy is not None, "start() first"
        return self.proxy.port

    @property
    def address(self) -> str:
        """`host:port` for clients' bootstrap servers."""
        return f"{self.config.listen.host}:{self.port}"

    def start(self) -> RecorderThread:
        """Open the trace, bind the listener, serve on a new thread; raises what binding raised."""
        self._file = self.out.open("w", encoding="utf-8")
        self.sink = TraceSink(TraceWriter(self._file, self.header))
        self.proxy = RecordingProxy(self.config, self.sink)
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()
        failure: list[BaseException] = []
        proxy = self.proxy

        def run() -> None:
            try:
                loop.run_until_complete(proxy.start())
            except BaseException as error:
                failure.append(error)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(proxy.close())
            loop.close()

        self._thread = threading.Thread(target=run, name="recording-proxy", daemon=True)
        self._thread.start()
        ready.wait(START_TIMEOUT_S)
        if failure:
            self._file.close()
            raise failure[0]
        return self

    def stop(self) -> None:
        """End every connection (close events), stop listening, close the trace."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT_S)
        self._loop = None
        self._thread = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> RecorderThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
