"""setup as root: the systemd unit it starts, the journal's directory it makes, the /healthz port it picks, the
printer language it finds or asks, and an exit status that says which step failed.

Run in-process with the setup module's paths moved into the test's own folder (/etc, /var/lib and the unit
directories of the machine are never touched) and the real Redis and printer emulators.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from cli.commands import setup as setup_code
from cli.main import main
from cli.redis_server import RedisServer
from drivers.emulators.brother import BrotherPrinter

UNIT_FILE = Path(__file__).resolve().parents[2] / "systemd" / "badge-agent@.service"


@dataclass
class Machine:
    """The paths setup writes to, inside the test's folder."""

    config_dir: Path
    state_dir: Path
    unit_dir: Path


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    here = Machine(tmp_path / "etc", tmp_path / "var-lib" / "badge-agent", tmp_path / "units")
    here.unit_dir.mkdir()
    monkeypatch.setattr(setup_code, "CONFIG_DIR", here.config_dir)
    monkeypatch.setattr(setup_code, "STATE_DIR", here.state_dir)
    monkeypatch.setattr(setup_code, "UNIT_DIRS", (here.unit_dir,))
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # as `sudo badge-agent setup`
    return here


def _args(venue: str, redis_url: str, address: str, name: str = "hall-d-1") -> list[str]:
    args = ["setup", "--yes", "--venue", venue, "--name", name, "--location", "Hall D", "--redis", redis_url]
    return [*args, "--language", "brother_ql", "--model", "QL-820NWB", "--host", address]


async def _invoke(args: list[str], text: str | None = None) -> Result:
    result: Result = await asyncio.to_thread(CliRunner().invoke, main, args, input=text)
    return result


async def test_setup_without_the_unit_says_what_to_install_before_writing_or_printing(
    machine: Machine, brother: tuple[BrotherPrinter, str], redis_server: RedisServer, venue: str
) -> None:
    emulator, address = brother
    result = await _invoke(_args(venue, redis_server.url, address))
    assert result.exit_code == 71, result.output
    assert "the systemd unit badge-agent@.service is not installed" in result.output
    assert "systemd/install.sh" in result.output and "--no-start" in result.output
    assert "journalctl" not in result.output  # nothing there to read yet
    assert not machine.config_dir.exists() and emulator.printed() == []


async def test_no_start_writes_a_config_whose_journal_directory_exists_and_says_how_to_start(
    machine: Machine, brother: tuple[BrotherPrinter, str], redis_server: RedisServer, venue: str
) -> None:
    emulator, address = brother
    result = await _invoke([*_args(venue, redis_server.url, address), "--no-start"])
    assert result.exit_code == 0, result.output
    assert "test badge: printed" in result.output and len(emulator.printed()) == 1
    assert "not started (--no-start); to start it: install the unit (sudo " in result.output
    assert "sudo systemctl enable --now badge-agent@hall-d-1" in result.output
    config = machine.config_dir / "hall-d-1.yaml"
    assert yaml.safe_load(config.read_text())["journal"] == str(machine.state_dir / "hall-d-1.journal")
    assert stat.S_IMODE(machine.state_dir.stat().st_mode) == 0o750

    for connect in ([], ["--connect"]):
        checked = await _invoke(["check-config", *connect, str(config)])
        assert checked.exit_code == 0 and "OK" in checked.output, checked.output
    # The directory gone (a wiped card, a config copied from another machine): named before the agent runs.
    machine.state_dir.rmdir()
    for connect in ([], ["--connect"]):
        checked = await _invoke(["check-config", *connect, str(config)])
        assert checked.exit_code == 78, checked.output
        assert f"journal: directory {machine.state_dir} does not exist" in checked.output
    run = await _invoke(["run", "-c", str(config)])
    assert run.exit_code == 78 and "journal: directory" in run.output, run.output


async def test_a_service_that_cannot_start_exits_71_pointing_at_its_status(
    machine: Machine,
    brother: tuple[BrotherPrinter, str],
    redis_server: RedisServer,
    venue: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shutil.copy(UNIT_FILE, machine.unit_dir)
    monkeypatch.setattr(setup_code, "SYSTEMCTL", "false")  # a real command that fails, as systemctl would
    _, address = brother
    result = await _invoke(_args(venue, redis_server.url, address))
    assert result.exit_code == 71, result.output
    assert "badge-agent@hall-d-1 did not start" in result.output
    assert "systemctl status badge-agent@hall-d-1" in result.output
    assert (machine.config_dir / "hall-d-1.yaml").is_file()


async def test_a_printer_that_does_not_answer_exits_74_not_the_redis_code(
    machine: Machine, redis_server: RedisServer, venue: str
) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        result = await _invoke([*_args(venue, redis_server.url, address), "--no-start"])
    assert result.exit_code == 74, result.output
    assert "printer" in result.output and "cannot reach Redis" not in result.output


async def test_the_healthz_port_skips_one_another_process_holds(
    machine: Machine,
    brother: tuple[BrotherPrinter, str],
    redis_server: RedisServer,
    venue: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, address = brother
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        held = other.getsockname()[1]
        monkeypatch.setattr(setup_code, "FIRST_HTTP_PORT", held)
        result = await _invoke([*_args(venue, redis_server.url, address), "--no-start", "--no-test-print"])
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert f"cannot listen on 127.0.0.1:{held} (http.listen): another process already listens there" in said
        first = yaml.safe_load((machine.config_dir / "hall-d-1.yaml").read_text())["http"]["listen"]
        assert first != f"127.0.0.1:{held}"
        # A second printer on this machine gets a port of its own, not the first one's.
        result = await _invoke([*_args(venue, redis_server.url, address, "hall-d-2"), "--no-start", "--no-test-print"])
        assert result.exit_code == 0, result.output
        second = yaml.safe_load((machine.config_dir / "hall-d-2.yaml").read_text())["http"]["listen"]
        assert second not in (first, f"127.0.0.1:{held}")


# Slow (about 13 s): setup waits out a printer that listens but never answers before it asks for the language.
@pytest.mark.slow
async def test_interactive_setup_uses_the_language_the_printer_tells_and_asks_when_it_does_not(
    tmp_path: Path, brother: tuple[BrotherPrinter, str], redis_server: RedisServer, venue: str
) -> None:
    _, address = brother
    out = tmp_path / "told.yaml"
    answers = f"{venue}\nhall-e-1\nHall E\n{redis_server.url}\n\n{address}\n"  # no Redis user name
    result = await _invoke(["setup", "--out", str(out), "--no-test-print"], answers)
    assert result.exit_code == 0, result.output
    assert f"the printer at {address} speaks brother_ql" in result.output
    assert "Printer language" not in result.output
    assert yaml.safe_load(out.read_text())["printer"]["driver"]["language"] == "brother_ql"

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        out = tmp_path / "asked.yaml"
        answers = f"{venue}\nhall-e-2\nHall E\n{redis_server.url}\n\n{address}\nescpos\n"
        result = await _invoke(["setup", "--out", str(out), "--no-test-print"], answers)
        assert f"Printer language (the printer at {address} did not say)" in result.output, result.output
        # The printer never answers, so the checks fail and nothing is written (a retry needs no --force).
        assert result.exit_code == 74 and "nothing written" in result.output and not out.exists(), result.output
        flags = ["--yes", "--venue", venue, "--name", "hall-e-3", "--location", "E", "--redis", redis_server.url]
        yes = await _invoke(["setup", *flags, "--host", address, "--out", str(tmp_path / "y.yaml")])
        assert yes.exit_code == 2 and "--language: the printer at" in yes.output, yes.output
