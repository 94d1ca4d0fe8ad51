"""Kiosk tokens that announce a body and never send it, against ``badge-agent intake`` as its own process: each token
and each address holds only its share of such requests (beyond it a clear 429 and a closed connection), and a desk's
requests all succeed meanwhile, whatever the kiosks hold. Loopback only.
"""

from __future__ import annotations

import json
import selectors
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from tests.support.intake import write_intake_config
from tests.support.processes import ROOT


@dataclass
class Intake:
    port: int
    desk: str
    kiosks: list[str]
    log: Path


@contextmanager
def intake_with(tmp_path: Path, server: RedisServer, venue: str, limits: str, kiosks: int) -> Iterator[Intake]:
    port = free_port()
    config = write_intake_config(tmp_path, venue, server.url, f"limits: {{{limits}}}\n", port=port)
    tokens = TokenFile(tmp_path / "tokens.json")
    desk = tokens.add("desk-1", "desk")
    secrets = [tokens.add(f"kiosk-{i}", "kiosk") for i in range(kiosks)]
    log = tmp_path / "intake.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "intake", "-c", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
    )
    try:
        assert proc.stdout is not None
        assert f":{port}" in proc.stdout.readline().decode(), log.read_text()
        yield Intake(port, desk, secrets, log)
    finally:
        proc.terminate()
        proc.wait(10)


@dataclass
class Outcome:
    held: list[socket.socket] = field(default_factory=list)  # no answer: the request still waits for its body
    answers: list[bytes] = field(default_factory=list)
    closed_unanswered: int = 0


def hold_bodies(port: int, secret: str, n: int) -> list[socket.socket]:
    """``n`` requests that announce a 100-byte body and send none of it."""
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    ).encode()
    held = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(head)
        held.append(s)
    return held


def settle(sockets: list[socket.socket], seconds: float = 3.0) -> Outcome:
    """What each socket got within ``seconds``: an answer, a hang-up without one, or nothing yet (held)."""
    outcome = Outcome()
    waiting = set(sockets)
    with selectors.DefaultSelector() as watch:
        for s in sockets:
            watch.register(s, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while waiting and time.monotonic() < deadline:
            for key, _ in watch.select(timeout=0.2):
                s = key.fileobj
                assert isinstance(s, socket.socket)
                try:
                    data = s.recv(65536)
                except ConnectionResetError:
                    data = b""
                if data:
                    outcome.answers.append(data)
                else:
                    outcome.closed_unanswered += 1
                watch.unregister(s)
                waiting.discard(s)
    outcome.held = [s for s in sockets if s in waiting]
    return outcome


def desk_requests(port: int, secret: str, n: int, first: int = 0) -> list[int]:
    """``n`` requests of a desk, each on a new connection: enqueue one new job (``desk-<first>`` on), then read the
    printers. Their statuses."""
    statuses = []
    for i in range(first, first + n):
        body = json.dumps({"attendee_id": f"desk-{i}", "name": f"Desk Guest {i}"}).encode()
        for request in (
            urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/jobs",
                data=body,
                headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
            ),
            urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/printers", headers={"Authorization": f"Bearer {secret}"}
            ),
        ):
            try:
                with urllib.request.urlopen(request, timeout=5) as resp:
                    statuses.append(resp.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
            except (ConnectionError, urllib.error.URLError):
                statuses.append(0)
    return statuses


def close_all(sockets: list[socket.socket]) -> None:
    for s in sockets:
        s.close()


def test_two_kiosk_tokens_hold_only_their_share_and_desks_are_all_served(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # The connections the two kiosks try to hold (60) are far more than the intake keeps (24).
    with intake_with(tmp_path, redis_server, venue, "max_connections: 24, body_timeout: 30", kiosks=2) as intake:
        sockets: list[socket.socket] = []
        outcome = Outcome()
        desk: list[int] = []
        at_desk = threading.Thread(target=lambda: desk.extend(desk_requests(intake.port, intake.desk, 15)))
        try:
            # In rounds of ten, each token in turn, while a desk works beside them.
            for round_ in range(6):
                batch = hold_bodies(intake.port, intake.kiosks[round_ % 2], 10)
                sockets += batch
                settled = settle(batch, 0.5)
                outcome.held += settled.held
                outcome.answers += settled.answers
                outcome.closed_unanswered += settled.closed_unanswered
                if round_ == 1:
                    at_desk.start()
            at_desk.join(60)
            assert len(outcome.held) == 2 * 4  # bodies_per_token (4) each
            assert outcome.closed_unanswered == 0
            assert len(outcome.answers) == 60 - 8
            for answer in outcome.answers:
                assert answer.startswith(b"HTTP/1.1 429"), answer[:300]
                assert b"this token has 4 requests whose bodies have not arrived" in answer, answer
                assert b"Connection: close" in answer
            # ... and the intake hangs up after it, holding nothing for the body it will not read.
            refused = next(s for s in sockets if s not in outcome.held)
            refused.settimeout(5)
            assert refused.recv(65536) == b""
            # While they held theirs, every request of the desk was answered.
            assert desk == [201, 200] * 15, desk
            # And still are.
            assert desk_requests(intake.port, intake.desk, 5, first=15) == [201, 200] * 5
        finally:
            close_all(sockets)


def test_kiosks_of_one_address_hold_its_share_and_desks_are_all_served(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # Ten kiosk tokens from one address, each within its own share (4), hold at most the address's (32).
    with intake_with(tmp_path, redis_server, venue, "max_connections: 64, body_timeout: 30", kiosks=10) as intake:
        sockets = [s for secret in intake.kiosks for s in hold_bodies(intake.port, secret, 4)]
        try:
            outcome = settle(sockets)
            assert len(outcome.held) == 32
            assert len(outcome.answers) == 8 and outcome.closed_unanswered == 0
            for answer in outcome.answers:
                assert answer.startswith(b"HTTP/1.1 429"), answer[:300]
                assert b"this address has 32 requests of kiosks whose bodies have not arrived" in answer, answer
            statuses = desk_requests(intake.port, intake.desk, 10)
            assert statuses == [201, 200] * 10, statuses
        finally:
            close_all(sockets)


def test_when_slow_kiosk_bodies_fill_every_connection_a_desk_takes_the_oldest_ones_place(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # Six kiosk tokens within their shares fill all 24 connections with requests waiting for bodies.
    with intake_with(tmp_path, redis_server, venue, "max_connections: 24, body_timeout: 30", kiosks=6) as intake:
        sockets = [s for secret in intake.kiosks for s in hold_bodies(intake.port, secret, 4)]
        try:
            assert len(settle(sockets, 1.0).held) == 24
            statuses = desk_requests(intake.port, intake.desk, 5)
            assert statuses == [201, 200] * 5, statuses
            # The first desk connection took the place of the kiosk request that had waited longest for its body
            # (later ones, the place of the desk connections closed before them).
            outcome = settle(sockets, 1.0)
            assert outcome.closed_unanswered >= 1 and not outcome.answers
        finally:
            close_all(sockets)
