"""systemd/badge-webhooks.service verifies and is as locked down as the intake's."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.systemd import INTAKE_UNIT, assert_verifies_with_low_exposure, hardening_lines

ROOT = Path(__file__).resolve().parents[2]
WEBHOOKS_UNIT = ROOT / "systemd" / "badge-webhooks.service"


def test_webhooks_unit_verifies_and_exposure_is_low(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("badge-agent")
    unit = tmp_path / WEBHOOKS_UNIT.name
    unit.write_text(WEBHOOKS_UNIT.read_text().replace("/opt/badge-agent/venv/bin/badge-agent", str(exe)))
    assert_verifies_with_low_exposure(unit)


def test_webhooks_unit_has_every_hardening_line_of_the_intake_and_runs_the_sender() -> None:
    text = WEBHOOKS_UNIT.read_text()
    assert hardening_lines(INTAKE_UNIT.read_text()) <= hardening_lines(text)
    assert "badge-agent webhooks run -c " in text and "RestartPreventExitStatus=78" in text
