"""``badge-agent intake token add|list|revoke`` and the config errors, as a user runs them."""

from __future__ import annotations

import json
import os
import pty
import stat
import subprocess
import sys
from pathlib import Path

from cli.redis_server import RedisServer
from intake.tokens import digest
from tests.support.intake import write_intake_config
from tests.support.processes import ROOT, run_cli


def test_token_add_prints_once_stores_a_hash_with_mode_0600(tmp_path: Path, redis_server: RedisServer) -> None:
    config = write_intake_config(tmp_path, "expo", redis_server.url)
    added = run_cli("intake", "token", "add", "kiosk-hall-a", "--role", "kiosk", "-c", str(config))
    assert added.returncode == 0, added.stderr
    secret = added.stdout.strip()
    assert secret.startswith("bdg_") and len(secret) > 40
    tokens = tmp_path / "tokens.json"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    text = tokens.read_text()
    assert secret not in text and json.loads(text)["tokens"]["kiosk-hall-a"]["sha256"] == digest(secret)
    listed = run_cli("intake", "token", "list", "-c", str(config))
    assert "kiosk-hall-a" in listed.stdout and "kiosk" in listed.stdout and secret not in listed.stdout
    twice = run_cli("intake", "token", "add", "kiosk-hall-a", "--role", "kiosk", "-c", str(config))
    assert twice.returncode == 2 and "exists" in twice.stderr
    bad_role = run_cli("intake", "token", "add", "x", "--role", "admin", "-c", str(config))
    assert bad_role.returncode == 2
    assert run_cli("intake", "token", "revoke", "kiosk-hall-a", "-c", str(config)).returncode == 0
    gone = run_cli("intake", "token", "revoke", "kiosk-hall-a", "-c", str(config))
    assert gone.returncode == 1 and "no token" in gone.stderr


def test_a_bad_config_exits_78_naming_file_and_field(tmp_path: Path) -> None:
    config = tmp_path / "intake.yaml"
    config.write_text("venue: Expo!\ntokens: t.json\nlimits: {rate: -1}\n")
    result = run_cli("intake", "-c", str(config))
    assert result.returncode == 78
    assert str(config) in result.stderr and "venue" in result.stderr and "limits.rate" in result.stderr
    assert "Traceback" not in result.stderr


def test_token_add_names_the_page_to_open_for_its_role(tmp_path: Path, redis_server: RedisServer) -> None:
    config = write_intake_config(tmp_path, "expo", redis_server.url, port=8181)
    kiosk = run_cli("intake", "token", "add", "kiosk-hall-a", "--role", "kiosk", "-c", str(config))
    assert kiosk.returncode == 0, kiosk.stderr
    # Captured by a script, the token stays on stdout only; the page is named on stderr.
    assert "its page: http://127.0.0.1:8181/kiosk#token=<the token above>" in kiosk.stderr, kiosk.stderr
    assert kiosk.stdout.strip() not in kiosk.stderr
    desk = run_cli("intake", "token", "add", "desk-1", "--role", "desk", "-c", str(config))
    assert "its page: http://127.0.0.1:8181/desk#token=" in desk.stderr, desk.stderr
    viewer = run_cli("intake", "token", "add", "screen", "--role", "viewer", "-c", str(config))
    assert "its page" not in viewer.stderr
    # At a terminal, where the person sees the token anyway, the address carries it: one thing to open.
    main, child = pty.openpty()
    try:
        staff = subprocess.run(
            [sys.executable, "-m", "agent", "intake", "token", "add", "sam", "--role", "staff", "-c", str(config)],
            cwd=ROOT,
            stdout=child,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
        os.close(child)
        child = -1
        secret = os.read(main, 4096).decode().strip()
    finally:
        if child != -1:
            os.close(child)
        os.close(main)
    assert staff.returncode == 0, staff.stderr
    assert f"its page: http://127.0.0.1:8181/desk#token={secret} — open it once" in staff.stderr, staff.stderr
