"""The exit codes every `groupspec` command shares (docs/cli.md): 0 success, 1 a check
failed, 2 bad input or usage, 3 incomplete (a budget stopped some check before it was done,
and nothing failed: `swarm`), 130 interrupted by Ctrl-C."""

from __future__ import annotations

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report a SIGINT: 128 + 2
