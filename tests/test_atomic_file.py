"""Result files are written whole or not at all, with the permissions any new file gets."""

from __future__ import annotations

import os
import stat

import pytest

from groupspec.checker.atomic_file import write_bytes_atomically


def test_a_new_file_follows_the_umask(tmp_path):
    previous = os.umask(0o027)
    try:
        write_bytes_atomically(tmp_path / "result.json", b"{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "result.json").stat().st_mode) == 0o640
    assert (tmp_path / "result.json").read_bytes() == b"{}"


def test_a_rewritten_file_keeps_its_mode(tmp_path):
    path = tmp_path / "preset.toml"
    path.write_bytes(b"old")
    path.chmod(0o664)
    write_bytes_atomically(path, b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o664
    assert path.read_bytes() == b"new"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "preset.toml"
    path.write_bytes(b"old")

    with pytest.raises(TypeError):
        write_bytes_atomically(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["preset.toml"]
