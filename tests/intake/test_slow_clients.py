"""Half-sent requests against ``badge-agent intake`` as its own process, with the 1024 descriptors a process gets by
default: new clients are still answered, and the half-sent ones are closed after the header timeout. Loopback only.
"""

from __future__ import annotations

import json
import resource
import selectors
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from tests.support.intake import write_intake_config
from tests.support.processes import ROOT


@pytest.fixture
def intake(tmp_path: Path, redis_server: RedisServer, venue: str) -> Iterator[tuple[int, str]]:
    port = free_port()
    config = write_intake_config(
        tmp_path, venue, redis_server.url, "limits: {header_timeout: 2, body_timeout: 1}\n", port=port
    )
    secret = TokenFile(tmp_path / "tokens.json").add("desk-1", "desk")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "intake", "-c", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "intake.log").open("wb"),
    )
    # What a process gets by default (systemd's soft limit), set before it serves anyone.
    resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (1024, 1024))
    try:
        assert proc.stdout is not None
        assert f":{port}" in proc.stdout.readline().decode()
        yield port, secret
    finally:
        proc.terminate()
        proc.wait(10)


def _answered(port: int, secret: str) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/printers", headers={"Authorization": f"Bearer {secret}"}
    )
    with urllib.request.urlopen(request, timeout=5) as resp:
        return resp.status == 200 and "printers" in json.loads(resp.read())


def test_a_thousand_half_sent_requests_do_not_stop_new_connections(intake: tuple[int, str]) -> None:
    port, secret = intake
    assert _answered(port, secret)
    half: list[socket.socket] = []
    try:
        for _ in range(1000):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /v1/printers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bdg_")  # never finished
            half.append(s)
        started = time.monotonic()
        assert _answered(port, secret)
        assert _answered(port, secret)
        assert time.monotonic() - started < 5
        # After the header timeout (2 s, looked at once a second), the server hangs up on every one of them.
        open_ = set(half)
        with selectors.DefaultSelector() as watch:  # epoll: a thousand descriptors, some numbered past 1024
            for sock in half:
                watch.register(sock, selectors.EVENT_READ)
            deadline = time.monotonic() + 10
            while open_ and time.monotonic() < deadline:
                for key, _ in watch.select(timeout=0.5):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        gone = sock.recv(1024) == b""
                    except ConnectionResetError:
                        gone = True
                    if gone:
                        open_.discard(sock)
                        watch.unregister(sock)
        assert not open_, f"{len(open_)} half-sent connections still open"
    finally:
        for s in half:
            s.close()


def test_a_slow_body_is_cut_off_with_408(intake: tuple[int, str]) -> None:
    port, secret = intake
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(
            f"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        answer = s.recv(4096)  # after body_timeout (1 s here)
    assert answer.startswith(b"HTTP/1.1 408") and b"problem+json" in answer
