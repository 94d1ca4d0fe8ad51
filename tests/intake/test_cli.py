"""``badge-agent intake token add|list|revoke`` and the config errors, as a user runs them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from cli.redis_server import RedisServer
from intake.tokens import digest
from tests.support.intake import write_intake_config
from tests.support.processes import run_cli


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
