"""The real command line as a subprocess (what an installer or staff types), and the ACL users it generates."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.scripts import load_library

ROOT = Path(__file__).resolve().parents[2]


def badge_agent(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``badge-agent ARGS`` from the repository, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "agent", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=timeout,
    )


def cli(server: RedisServer, venue: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``badge-agent ARGS`` against ``server``'s ``venue`` (BADGE_REDIS_URL, BADGE_VENUE), 200 columns wide."""
    env = {**os.environ, "BADGE_REDIS_URL": server.url, "BADGE_VENUE": venue, "COLUMNS": "200"}
    return badge_agent(*args, env=env, stdin=stdin)


async def create_user(
    admin: Redis, venue: str, password_file: Path, printer: str | None = None, role: str = "kiosk"
) -> str:
    """Generate the user's line with ``badge-agent acl`` and run it on the server, after loading the functions
    library with the admin's connection (least-privilege users cannot). Returns the user name."""
    await load_library(admin)
    who = ["--printer", printer] if printer else ["--role", role]
    result = badge_agent("acl", "--venue", venue, *who, "--password-file", str(password_file))
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    words = shlex.split(line)
    assert words[:2] == ["ACL", "SETUSER"], line
    assert password_file.read_text().strip() not in line  # only the hash travels
    await admin.execute_command(*words)
    return words[2]


@contextmanager
def board_process(url: str, venue: str) -> Iterator[str]:
    """``badge-agent board`` as the operator runs it, on a free port; yields its address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "board", "--redis", url, "--venue", venue, "--listen", "127.0.0.1:0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline() if proc.stdout else ""))
        reader.start()
        reader.join(30)
        assert lines and "http://" in lines[0], f"board did not start: {proc.poll()} {lines}"
        yield lines[0].split(" on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def intake_process(config: Path, port: int) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "intake", "-c", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert f":{port}" in line, f"intake did not start: {line!r} {proc.poll()}"
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        assert "bdg_" not in err  # no token in its log


def spawn_intake(config: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """``badge-agent intake`` as its own process, once it listens on ``port``; its log goes to ``log`` (a pipe
    nobody reads would fill under a flood and stall it). The caller terminates it."""
    with log.open("ab") as err:  # the process has its own copy
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent", "intake", "-c", str(config)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        line = proc.stdout.readline().decode() if proc.stdout else ""
        assert f":{port}" in line, f"intake did not start: {line!r} {proc.poll()}"
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise
    return proc


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
