"""What clients send to Redis, for the tests and the benches: every command (MONITOR) and every round trip (counted
in the client)."""

from __future__ import annotations

import re
import socket
import threading
import time
from typing import Any

from redis.asyncio import Redis


class Monitor:
    """MONITOR on its own socket: (unix time, client, command, first argument) of every command clients send.

    Lua-internal calls come with the client ``lua``; the round-trip counts leave them out by it.
    """

    LINE = re.compile(r'^\+?([\d.]+) \[\d+ ([^\]]+)\] "(\w+)"(?: "([^"]*)")?')

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"MONITOR\r\n")
        self.lines: list[str] = []
        self._stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        buf = b""
        while not self._stop:
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            *lines, buf = buf.split(b"\r\n")
            self.lines += [line.decode("utf-8", "replace") for line in lines]

    def close(self) -> list[tuple[float, str, str, str]]:
        self._stop = True
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(2)
        out = []
        for line in self.lines:
            if m := self.LINE.match(line):
                out.append((float(m.group(1)), m.group(2), m.group(3).lower(), m.group(4) or ""))
        return out


class RoundTrips:
    """Every round trip a client makes, seen from the client: one per command or pipeline written to the socket.

    MONITOR shows commands, not round trips (a pipeline's commands arrive one by one); this counts the writes. Each
    entry is (``time.perf_counter()``, the start of the bytes sent), so callers can window them and tell scripts
    apart by their SHA. Install before the client opens its connections.
    """

    def __init__(self, redis: Redis) -> None:
        self.sent: list[tuple[float, bytes]] = []
        pool = redis.connection_pool
        base: Any = pool.connection_class
        sent = self.sent

        class Counting(base):  # type: ignore[misc]
            async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                head = command if isinstance(command, bytes | str) else b"".join(command[:3])
                sent.append((time.perf_counter(), head[:200] if isinstance(head, bytes) else head[:200].encode()))
                await super().send_packed_command(command, check_health)

        pool.connection_class = Counting

    def between(self, start: float, end: float, *, excluding: bytes = b"") -> int:
        """Round trips sent in [start, end] (perf_counter), leaving out those whose head contains ``excluding``."""
        return sum(1 for t, head in self.sent if start <= t <= end and not (excluding and excluding in head))
