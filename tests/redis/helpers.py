"""Helpers for the Redis deployment tests: real redis-server/sentinel processes on loopback, generated ACL users."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from redis.asyncio import Redis

from agent.protocol.scripts import load_library

ROOT = Path(__file__).resolve().parents[2]


def badge_agent(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a subprocess (what an installer types)."""
    return subprocess.run(
        [sys.executable, "-m", "agent", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


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
