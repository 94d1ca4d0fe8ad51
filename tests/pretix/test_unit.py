"""systemd/badge-pretix-sync.service verifies and is as locked down as the intake's."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.systemd import INTAKE_UNIT, assert_verifies_with_low_exposure, hardening_lines

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
    assert_verifies_with_low_exposure(unit)


def test_sync_unit_has_every_hardening_line_of_the_intake() -> None:
    assert hardening_lines(INTAKE_UNIT.read_text()) <= hardening_lines(SYNC_UNIT.read_text())
    assert "--follow" in SYNC_UNIT.read_text() and "RestartPreventExitStatus=78" in SYNC_UNIT.read_text()
