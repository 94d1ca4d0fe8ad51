"""The sync command on the real pretix: records as JSON lines, exit 78/69 for settings/pretix, --follow through an
outage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from cli.commands.pretix_read import sync
from tests.pretix.server import free_loopback_port
from tests.support.pretix_server import Pretix

ROOT = Path(__file__).resolve().parents[2]


def args(pretix: Pretix, token_file: Path, out: Path, *more: str) -> list[str]:
    return [
        "--pretix",
        pretix.url,
        "--event",
        f"{pretix.organizer}/{pretix.event}",
        "--token-file",
        str(token_file),
        "--checkin-list",
        str(pretix.entrance),
        "-o",
        str(out),
        *more,
    ]


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_one_read_writes_every_ticket_as_a_json_line(pretix: Pretix, token_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "attendees.jsonl"
    result = CliRunner().invoke(sync, args(pretix, token_file, out))
    assert result.exit_code == 0, result.output
    got = {r["attendee_id"]: r for r in rows(out)}
    seeded = pretix.position("山田 太郎")
    row = got[seeded["secret"]]
    assert row["name"] == "山田 太郎"
    assert row["company"] == "株式会社テスト"
    assert row["job_id"] == f"{seeded['order']}-{seeded['id']}"
    assert row["fields"]["ticket_type"] == "Regular"
    assert row["status"] == "valid"
    assert got[pretix.position(index=5)["secret"]]["needs_attention"] is True
    assert "pretix first read:" in result.stderr
    assert pretix.token not in result.output
    assert "pronouns" not in got[pretix.position("Renée Müller")["secret"]]["fields"]  # only when mapped


def test_answers_to_questions_go_into_fields(pretix: Pretix, token_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "attendees.jsonl"
    result = CliRunner().invoke(sync, args(pretix, token_file, out, "--answer", "pronouns=PRONOUNS"))
    assert result.exit_code == 0, result.output
    got = {r["attendee_id"]: r for r in rows(out)}
    assert got[pretix.position("Renée Müller")["secret"]]["fields"] == {
        "pronouns": "she/her",
        "ticket_type": "Regular",
        "product_id": str(pretix.seed["items"]["Regular"]),
    }
    assert "pronouns" not in got[pretix.position("Ahmed Al-Sayed")["secret"]]["fields"]  # no answer, no field

    for bad in ("Pronouns=PRONOUNS", "pronouns=", "ticket_type=PRONOUNS"):
        result = CliRunner().invoke(sync, args(pretix, token_file, out, "--answer", bad))
        assert (result.exit_code, "--answer" in result.stderr) == (78, True), bad


def test_settings_to_fix_exit_78_and_pretix_away_exits_69(pretix: Pretix, token_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    runner = CliRunner()

    token_file.chmod(0o644)
    result = runner.invoke(sync, args(pretix, token_file, out))
    assert result.exit_code == 78
    assert "every user of this machine can read it" in result.stderr
    token_file.chmod(0o600)

    bad_event = args(pretix, token_file, out)
    bad_event[3] = "just-an-event"
    result = runner.invoke(sync, bad_event)
    assert (result.exit_code, "give ORGANIZER/EVENT" in result.stderr) == (78, True)

    bad_event[3] = f"{pretix.organizer}/no-such-event"
    result = runner.invoke(sync, bad_event)
    assert (result.exit_code, "check --event" in result.stderr) == (78, True)

    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-token\n", encoding="utf-8")
    wrong.chmod(0o600)
    result = runner.invoke(sync, args(pretix, wrong, out))
    assert (result.exit_code, "--token-file" in result.stderr) == (78, True)

    away = args(pretix, token_file, out)
    away[1] = f"http://127.0.0.1:{free_loopback_port()}"
    result = runner.invoke(sync, away)
    assert (result.exit_code, "cannot be reached" in result.stderr) == (69, True)
    assert "Traceback" not in result.output


def wait_for(check: Any, timeout: float, what: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:g} s: {what}")


def test_follow_keeps_reading_through_an_outage(lone_pretix: Pretix, tmp_path: Path) -> None:
    pretix = lone_pretix
    token_file = tmp_path / "token"
    token_file.write_text(pretix.token, encoding="utf-8")
    token_file.chmod(0o600)
    out = tmp_path / "follow.jsonl"
    log = tmp_path / "follow.log"
    argv = [sys.executable, "-m", "pretix_sync"]
    argv += args(pretix, token_file, out, "--follow", "--interval", "0.5")
    with log.open("w") as err:
        process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_for(lambda: len(rows(out)) >= 6, 30, "the first read")
        placed = pretix.data("order", "Follow Me")
        took = wait_for(lambda: placed["secret"] in {r["attendee_id"] for r in rows(out)}, 10, "a new order")
        assert took < 10  # a change in pretix reaches the list within seconds

        pretix.server.stop()
        wait_for(lambda: "pretix unreachable" in log.read_text(), 15, "the outage noticed")
        assert process.poll() is None  # still running, waiting for pretix
        pretix.data("rename", str(placed["id"]), "Followed Through")  # changed while pretix was away from us
        pretix.server.start()
        wait_for(lambda: any(r["name"] == "Followed Through" for r in rows(out)), 15, "the change after the outage")
        assert "pretix answers again" in log.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=15)
    assert code == 0, log.read_text()
    assert pretix.token not in log.read_text()
    assert os.path.getsize(out) > 0
