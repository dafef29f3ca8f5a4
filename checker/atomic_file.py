"""Writing a file whole or not at all: a temporary file beside it, then a rename."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temporary file, so a failure never leaves half a file.

    The file gets the mode it had, or, when new, the mode the umask gives any new file
    (a temporary file alone would be private to its owner)."""
    mode = _mode_for(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """The permission bits `path` has, or those `open` would give it under the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0o022)  # reading the umask means setting it; put it straight back
        os.umask(umask)
        return 0o666 & ~umask
