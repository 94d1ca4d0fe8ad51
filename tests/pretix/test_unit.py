"""systemd/badge-pretix-sync.service verifies and is as locked down as the intake's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.systemd import INTAKE_UNIT, systemd_analyze

ROOT = Path(__file__).resolve().parents[2]
SYNC_UNIT = ROOT / "systemd" / "badge-pretix-sync.service"


def test_sync_unit_verifies_and_exposure_is_low(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("badge-agent")
    unit = tmp_path / SYNC_UNIT.name
    env = tmp_path / "pretix-sync.env"
    env.write_text("BADGE_VENUE=v\n")
    unit.write_text(
        SYNC_UNIT.read_text()
        .replace("/opt/badge-agent/venv/bin/badge-agent", str(exe))
        .replace("/etc/badge-agent/pretix-sync.env", str(env))
    )
    verify = subprocess.run([systemd_analyze(), "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and verify.stderr.strip() == "", verify
    security = subprocess.run(
        [systemd_analyze(), "security", "--offline=yes", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", security.stdout)
    assert match and float(match.group(1)) <= 2.0, security.stdout


def test_sync_unit_has_every_hardening_line_of_the_intake() -> None:
    def settings(text: str) -> set[str]:
        return {line for line in text.splitlines() if re.match(r"(Protect|Restrict|NoNew|Capability|SystemCall)", line)}

    assert settings(INTAKE_UNIT.read_text()) <= settings(SYNC_UNIT.read_text())
    assert "--follow" in SYNC_UNIT.read_text() and "RestartPreventExitStatus=78" in SYNC_UNIT.read_text()
