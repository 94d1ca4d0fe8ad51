"""systemd/badge-intake.service verifies and is as locked down as the agent's; config/intake.yaml loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from intake.config import IntakeConfig, load_intake_config
from tests.support.processes import ROOT
from tests.support.systemd import INTAKE_UNIT, UNIT, assert_verifies_with_low_exposure, hardening_lines


def local_unit(tmp_path: Path) -> Path:
    exe = Path(sys.executable).with_name("badge-agent")
    out = tmp_path / INTAKE_UNIT.name
    out.write_text(INTAKE_UNIT.read_text().replace("/opt/badge-agent/venv/bin/badge-agent", str(exe)))
    return out


def test_intake_unit_verifies_and_exposure_is_low(tmp_path: Path) -> None:
    unit = local_unit(tmp_path)
    assert_verifies_with_low_exposure(unit)


def test_intake_unit_has_every_hardening_line_of_the_agents() -> None:
    agent, intake = hardening_lines(UNIT.read_text()), hardening_lines(INTAKE_UNIT.read_text())
    # Narrower on purpose: no AF_NETLINK (that is libusb's hot-plug socket; the intake has no printer).
    assert {s for s in agent if not s.startswith("RestrictAddressFamilies")} <= intake
    assert "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" in intake


def test_intake_unit_bounds_descriptors_tasks_and_memory() -> None:
    lines = set(INTAKE_UNIT.read_text().splitlines())
    limit = next(int(line.split("=")[1]) for line in lines if line.startswith("LimitNOFILE="))
    # Room for every connection the intake holds by default, its Redis pool and its own files.
    assert limit >= load_defaults().limits.max_connections + 100 + 64
    assert any(line.startswith("TasksMax=") for line in lines)
    assert any(line.startswith("MemoryMax=") for line in lines)


def load_defaults() -> IntakeConfig:
    return IntakeConfig(venue="v", tokens=Path("tokens.json"))


def test_example_config_loads(tmp_path: Path) -> None:
    text = (
        (ROOT / "config" / "intake.yaml")
        .read_text()
        .replace("/etc/badge-agent/intake.redis-password", str(tmp_path / "pw"))
    )
    (tmp_path / "pw").write_text("secret\n")
    path = tmp_path / "intake.yaml"
    path.write_text(text)
    config = load_intake_config(path)
    assert config.venue == "expo-2026" and config.limits.reprint_cap == 2 and config.listen == "127.0.0.1:8080"


def test_intake_config_gets_the_agents_bounds(tmp_path: Path) -> None:
    # A directory, an oversized file and YAML without a mapping each exit 78 naming the file (never click's 2), for
    # the intake and for the setup commands that read an agent config.
    huge = tmp_path / "huge.yaml"
    huge.write_text("venue: v\n" + "".join(f"junk{i}: {i}\n" for i in range(100_000)))
    listed = tmp_path / "list.yaml"
    listed.write_text("- venue\n")
    cases = [(tmp_path, "is a directory"), (huge, "larger than"), (listed, "must hold a mapping")]
    commands = [["intake"], ["intake", "token", "list"], ["preview", "--name", "Ada"], ["test-print"]]
    for (path, said), command in ((case, command) for case in cases for command in commands):
        result = subprocess.run(
            [sys.executable, "-m", "agent", *command, "-c", str(path)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 78, (command, path, result.stderr)
        assert str(path) in result.stderr and said in result.stderr and "Traceback" not in result.stderr
