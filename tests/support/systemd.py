"""The shipped systemd units and the tool that checks them."""

from __future__ import annotations

import shutil
import subprocess

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
