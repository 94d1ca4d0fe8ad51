"""config/prometheus/alerts.yml: valid for Prometheus (promtool), each rule started, held and cleared by its unit-test
series, and at the thresholds the sender's alerts use by default (webhooks/alerts.py)."""

from __future__ import annotations

import re
import shutil
import subprocess

import yaml

from tests.support.processes import ROOT
from webhooks.alerts import AlertsConfig

RULES = ROOT / "config" / "prometheus"


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: apt-get install prometheus (scripts/setup --dev installs it)"
    return subprocess.run([promtool, *args], cwd=RULES, capture_output=True, text=True, timeout=120)


def test_promtool_checks_the_rules() -> None:
    result = _promtool("check", "rules", "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 7 rules found" in result.stdout


def test_promtool_runs_the_rules_unit_tests() -> None:
    result = _promtool("test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_use_the_senders_defaults() -> None:
    rules = {r["alert"]: r for r in yaml.safe_load((RULES / "alerts.yml").read_text())["groups"][0]["rules"]}
    defaults = AlertsConfig()

    def number_after(alert: str, text: str) -> float:
        found = re.search(re.escape(text) + r"\s*(\d+(?:\s*\*\s*\d+)?)", rules[alert]["expr"])
        assert found, (alert, text)
        value = 1.0
        for factor in found.group(1).split("*"):  # a literal like "15 * 60"
            value *= float(factor)
        return value

    assert number_after("BadgePrinterOutOfLabels", "badge_device_fault_age_seconds >") == defaults.out_of_labels
    assert number_after("BadgePrinterFault", "badge_device_fault_age_seconds >") == defaults.fault
    assert number_after("BadgePrinterDown", "badge_device_fault_age_seconds >") == defaults.printer_down
    assert number_after("BadgeZoneWait", "badge_zone_wait_minutes >") == defaults.zone_wait
    assert number_after("BadgeDLQGrowing", ">=") == defaults.dlq_growth
    assert "[10m]" in rules["BadgeDLQGrowing"]["expr"] and defaults.dlq_window == 600
    assert "[5m]" in rules["BadgeRedisFailover"]["expr"] and defaults.redis_failover == 300
    assert all(r.get("keep_firing_for", "30s") == f"{defaults.clear_after:g}s" for r in rules.values())
