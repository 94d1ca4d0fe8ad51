"""The real command line as a subprocess (what an installer or staff types), and the ACL users it generates."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from redis.asyncio import Redis

from agent.protocol.scripts import load_library
from agent.redis_server import RedisServer

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
