"""Config validation: every mistake named with its file and field, before anything is touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.config import load_config
from agent.errors import EXIT_CONFIG, ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "hall-a-1.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = """
venue: expo-2026
printer:
  name: hall-a-1
  location: Hall A
  driver: {language: sim, transport: sim}
"""


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.path == str(path)
    return info.value.problems


def test_the_shipped_example_is_valid() -> None:
    config = load_config(EXAMPLE)
    assert config.printer.name == "hall-a-1" and config.timing.dead_after == 3.0


def test_defaults_fill_what_is_left_out(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, BASE))
    assert config.redis.url == "redis://127.0.0.1:6379/0"
    assert config.timing.heartbeat_interval == 1.0 and config.jobs.max_attempts == 3


def test_http_listen_off_as_yaml_writes_it(tmp_path: Path) -> None:
    for text in ("off", '"off"', "null", "no"):
        assert load_config(write(tmp_path, BASE + f"http:\n  listen: {text}\n")).http.listen is None
    assert problems(write(tmp_path, BASE + "http:\n  listen: on\n")) == ["http.listen: Input should be a valid string"]


def test_unknown_key_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    text = BASE + "timing:\n  heartbeat_intervall: 2\n"
    assert problems(write(tmp_path, text)) == [
        "timing.heartbeat_intervall: unknown field (did you mean 'heartbeat_interval'?)"
    ]


def test_missing_and_out_of_range_fields_are_each_named(tmp_path: Path) -> None:
    text = """
venue: Expo 2026
printer:
  location: Hall A
  driver: {language: zpl, transport: tcp, port: 99999}
"""
    found = problems(write(tmp_path, text))
    assert any(p.startswith("venue: must be lowercase") and "'Expo 2026'" in p for p in found)
    assert "printer.name: required field is missing" in found
    assert any(p.startswith("printer.driver.port:") and "65535" in p for p in found)


def test_transport_needs_its_own_fields(tmp_path: Path) -> None:
    text = BASE.replace("{language: sim, transport: sim}", "{language: zpl, transport: tcp}")
    assert problems(write(tmp_path, text)) == ["printer.driver: transport 'tcp' needs 'host'"]
    text = BASE.replace(
        "{language: sim, transport: sim}", "{language: zpl, transport: serial, host: x, device: /dev/ttyS0}"
    )
    assert any("host belong(s) to transport 'tcp'" in p for p in problems(write(tmp_path, text)))


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    found = problems(write(tmp_path, "venue: x\nprinter: [unclosed\n"))
    assert len(found) == 1 and found[0].startswith("line ") and "not valid YAML" in found[0]


def test_missing_file_and_non_mapping(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope.yaml") == ["file not found"]
    assert "mapping" in problems(write(tmp_path, "- a\n- b\n"))[0]


def test_password_sources_are_checked_but_never_shown(tmp_path: Path) -> None:
    text = BASE + "redis:\n  url: redis://127.0.0.1:6379/0\n  password_env: BADGE_TEST_NOPE\n"
    assert problems(write(tmp_path, text)) == ["redis.password_env: environment variable BADGE_TEST_NOPE is not set"]
    secret = tmp_path / "pw"
    secret.write_text("hunter2-secret\n")
    text = BASE + f"redis:\n  url: redis://127.0.0.1:6379/0\n  password_file: {secret}\n"
    config = load_config(write(tmp_path, text))
    assert config.redis.password() == "hunter2-secret"
    url = BASE + "redis:\n  url: redis://user:hunter2-secret@127.0.0.1:6379/0\n"
    assert "hunter2" not in load_config(write(tmp_path, url)).redis.safe_url()


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_check_config_cli_ok_and_errors_without_traceback(tmp_path: Path) -> None:
    ok = run_cli("check-config", str(EXAMPLE))
    assert ok.returncode == 0, ok.stderr
    assert "hall-a-1" in ok.stdout and "Hall A, desk 1" in ok.stdout and ok.stdout.rstrip().endswith("OK")
    bad = run_cli("check-config", str(write(tmp_path, BASE + "bogus: 1\n")))
    assert bad.returncode == EXIT_CONFIG
    assert str(tmp_path / "agent.yaml") in bad.stderr and "bogus: unknown field" in bad.stderr
    assert "Traceback" not in bad.stderr + bad.stdout


def test_check_config_warns_about_a_world_readable_secret(tmp_path: Path) -> None:
    text = BASE + "redis:\n  url: redis://:s3cret-value@127.0.0.1:6379/0\n"
    path = write(tmp_path, text)
    path.chmod(0o644)
    result = run_cli("check-config", str(path))
    assert result.returncode == 0
    assert "every user can read it" in result.stderr
    assert "s3cret-value" not in result.stdout + result.stderr
    path.chmod(0o640)  # root:badge-agent 0640 is the recommended set-up: no warning
    assert "every user can read it" not in run_cli("check-config", str(path)).stderr


def test_run_refuses_a_bad_config_before_touching_anything(tmp_path: Path) -> None:
    # Redis URL points at a closed port: a config error must be reported first, and nothing else attempted.
    path = write(tmp_path, BASE.replace("hall-a-1", "Hall A 1"))
    result = run_cli("run", "-c", str(path))
    assert result.returncode == EXIT_CONFIG
    assert "printer.name" in result.stderr and "Traceback" not in result.stderr
