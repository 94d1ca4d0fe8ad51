"""The unit template, install script and venue Redis config: checked with systemd's and Redis's own tools."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from cli.commands import setup as setup_code
from cli.redis_server import find_redis_server, free_port
from core.errors import EXIT_CONFIG
from tests.support.processes import ROOT
from tests.support.systemd import RULES, UNIT, systemd_analyze


def unit_with_local_exec(tmp_path: Path) -> Path:
    """The template with ExecStart pointing at this venv's badge-agent (verify checks that the binary exists)."""
    exe = Path(sys.executable).with_name("badge-agent")
    assert exe.exists(), f"{exe} missing: pip install -e . first"
    text = UNIT.read_text().replace("/opt/badge-agent/venv/bin/badge-agent", str(exe))
    out = tmp_path / UNIT.name
    out.write_text(text)
    return out


def test_unit_verifies_clean(tmp_path: Path) -> None:
    unit = unit_with_local_exec(tmp_path)
    result = subprocess.run(
        [systemd_analyze(), "verify", str(unit.with_name("badge-agent@hall-a-1.service"))],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and result.stdout.strip() == "" and result.stderr.strip() == "", result


def test_unit_exposure_stays_low(tmp_path: Path) -> None:
    unit = unit_with_local_exec(tmp_path)
    result = subprocess.run(
        [systemd_analyze(), "security", "--offline=yes", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= 2.0, result.stdout  # 1.7 when written; "OK" in systemd's words up to 3.9


def test_unit_agrees_with_the_agent_the_udev_rules_and_the_install_script() -> None:
    unit = UNIT.read_text()
    settings = {k: v for k, v in re.findall(r"^(\w+)=(.*)$", unit, re.M)}
    assert settings["Type"] == "notify"
    assert settings["Restart"] == "always"
    assert settings["RestartPreventExitStatus"] == str(EXIT_CONFIG)
    assert settings["ExecStart"].endswith("run -c /etc/badge-agent/%i.yaml")
    assert settings["NoNewPrivileges"] == "yes" and settings["ProtectSystem"] == "strict"
    assert settings["DevicePolicy"] == "closed"
    # The udev rules hand printers to the unit's group.
    groups = set(re.findall(r'GROUP="([^"]+)"', RULES.read_text()))
    assert groups == {settings["Group"]} == {settings["User"]}
    # The journal path setup writes (install.sh runs setup) lives in the unit's state directory.
    assert settings["StateDirectory"] == "badge-agent"
    # setup makes that directory as the unit would (same path, mode and owner) and writes the config it reads.
    assert Path("/var/lib") / settings["StateDirectory"] == setup_code.STATE_DIR
    assert settings["StateDirectoryMode"] == "0750" and settings["User"] == setup_code.SERVICE_USER
    assert Path("/etc/badge-agent") == setup_code.CONFIG_DIR and setup_code.UNIT == "badge-agent@.service"
    install = (ROOT / "systemd" / "install.sh").read_text()
    assert 'badge-agent" setup --name "$printer"' in install and "/etc/badge-agent" in install
    assert subprocess.run(["bash", "-n", str(ROOT / "systemd" / "install.sh")], check=False).returncode == 0
    # Stopping must outlast the badge in progress (shutdown_grace 20 s) plus the hand-back (10 s).
    assert int(settings["TimeoutStopSec"]) > 30


def test_venue_redis_config_is_accepted_by_redis_server(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [find_redis_server(), str(ROOT / "config" / "redis-venue.conf"), "--port", str(port), "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = Redis(port=port, socket_connect_timeout=0.2, decode_responses=True)
        deadline = time.monotonic() + 10
        while True:
            if proc.poll() is not None:
                pytest.fail(f"redis-server rejected config/redis-venue.conf (exit {proc.returncode})")
            try:
                client.ping()
                break
            except RedisConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start with config/redis-venue.conf"
                time.sleep(0.05)
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "always"}
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        client.close()
    finally:
        proc.terminate()
        proc.wait(10)
