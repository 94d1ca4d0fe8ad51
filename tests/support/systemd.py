"""The shipped systemd units and the tool that checks them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.processes import ROOT

UNIT = ROOT / "systemd" / "badge-agent@.service"
RULES = ROOT / "systemd" / "99-badge-printers.rules"
INTAKE_UNIT = ROOT / "systemd" / "badge-intake.service"


def systemd_analyze() -> str:
    """systemd-analyze, installed from Debian's systemd package when missing (we run as root in CI)."""
    found = shutil.which("systemd-analyze")
    if found is None and shutil.which("apt-get") is not None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "systemd"], capture_output=True, timeout=600, check=False)
        found = shutil.which("systemd-analyze")
    if found is None:
        pytest.fail("systemd-analyze is needed to check the unit: apt-get install systemd")
    return found


def assert_verifies_with_low_exposure(unit: Path) -> None:
    """``systemd-analyze verify`` says nothing, and ``security`` rates the unit's exposure at most 2.0."""
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


def hardening_lines(text: str) -> set[str]:
    """A unit's sandboxing settings (Protect*, Restrict*, NoNewPrivileges, Capability*, SystemCall*)."""
    return {line for line in text.splitlines() if re.match(r"(Protect|Restrict|NoNew|Capability|SystemCall)", line)}
