"""Shared pieces of the real-driver benches: an emulated printer in its own process, and a real driver to reach it.

The emulator runs as a separate process (``drivers.emulators.cli.serve``) so its print engine keeps its own
clock and does not share the agent's event loop; it logs when each label went under the head and when it came out.
It does not decode the labels it prints (``read_back``): that costs it 10-20 ms of CPU a label, during which it
would not answer the driver, time a real printer does not spend.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cli.redis_server import free_port
from drivers.base import Driver
from drivers.languages import LANGUAGES
from drivers.transports import TcpTransport
from tests.support.drivers import LABELS

LANGS = ("zpl", "brother_ql", "escpos", "dymo", "tspl")


@contextmanager
def emulator(kind: str, print_time: float, log: Path) -> Iterator[int]:
    """An emulated ``kind`` printer on a loopback port (yielded), printing ``print_time`` s a label."""
    port = free_port()
    code = (
        "import asyncio, pathlib; from drivers.emulators.cli import serve; "
        f"asyncio.run(serve({kind!r}, port={port}, print_time={print_time}, print_log=pathlib.Path({str(log)!r}), "
        "read_back=False))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"the {kind} emulator did not start") from None
                time.sleep(0.05)
        time.sleep(0.2)  # the probe connection above has been let go
        yield port
    finally:
        proc.terminate()
        proc.wait(5)


def real_driver(kind: str, port: int, name: str, **options: Any) -> Driver:
    transport = TcpTransport("127.0.0.1", port, connect_timeout=2.0, io_timeout=3.0)
    return LANGUAGES[kind](transport, printer_name=name, label=LABELS[kind], io_timeout=3.0, **options)


def read_labels(log: Path) -> list[dict[str, Any]]:
    """The complete labels in an emulator's print log, in the order they came out."""
    import json

    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [e for e in entries if e.get("complete") and "started_t" in e]
