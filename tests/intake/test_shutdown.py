"""``badge-agent intake`` as its own process stops within seconds of SIGTERM, a long-poll open: the long-poll is
answered with the job's state as it is, and the process exits 0. Loopback only."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from tests.support.intake import write_intake_config
from tests.support.processes import ROOT


def _call(url: str, secret: str, method: str = "GET", body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def _metrics(base: str) -> str:
    with urllib.request.urlopen(f"{base}/metrics", timeout=30) as resp:
        return str(resp.read().decode())


def test_sigterm_stops_the_intake_within_5_s_answering_an_open_long_poll(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    secret = TokenFile(tmp_path / "tokens.json").add("desk-1", "desk")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "intake", "-c", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert f":{port}" in proc.stdout.readline()
        base = f"http://127.0.0.1:{port}"
        status, made = _call(f"{base}/v1/jobs", secret, "POST", {"attendee_id": "a1", "name": "Ada"})
        assert status == 201, made
        job_url = f"{base}/v1/jobs/{made['job_id']}"
        answers: list[tuple[int, Any]] = []
        poll = threading.Thread(target=lambda: answers.append(_call(f"{job_url}?wait=25", secret)))
        poll.start()
        deadline = time.monotonic() + 20
        while "badge_intake_watches 1.0" not in _metrics(base):  # the long-poll is open and waiting
            assert time.monotonic() < deadline and not answers, f"the long-poll did not open: {answers}"
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            raise AssertionError("the intake did not stop within 5 s of SIGTERM") from None
        poll.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    (answer,) = answers
    assert answer[0] == 200 and answer[1]["state"] == "queued", answer  # what it had, not a dropped connection
