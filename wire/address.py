"""`HOST:PORT` addresses on the command line."""

from __future__ import annotations

import socket
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Address:
    """A host and a TCP port."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str, *, allow_port_zero: bool = False) -> Address:
        """`"127.0.0.1:9092"` (or `"[::1]:9092"`) -> Address; ValueError names what is wrong."""
        host, sep, port = text.strip().rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{text!r}: expected HOST:PORT")
        number = int(port)
        if not (0 if allow_port_zero else 1) <= number <= 65535:
            raise ValueError(f"{text!r}: port {number} is not in [1, 65535]")
        return cls(host, number)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` right now (someone else may take it before it is bound)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
