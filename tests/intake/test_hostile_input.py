"""Bytes a broken or hostile kiosk sends, and text no badge should carry: each answered as a problem, never a 500.

Also the pages' security headers, the board's and the intake's ports, and a Redis URL's password in error messages.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from redis.asyncio import Redis

from board.server import Board, make_board_app
from cli.commands.board import board
from cli.redis_server import RedisServer
from core.errors import JobError
from core.logs import JsonFormatter, KeyValueFormatter
from intake.config import IntakeConfig
from protocol.jobs import parse_job
from protocol.keys import Keys
from tests.support.intake import Desk
from tests.support.metrics import samples
from tests.support.processes import ROOT

PROBLEM = "application/problem+json"


def metric(text: str, route: str, status: int) -> int:
    return int(samples(text).get(("badge_intake_requests_total", (("route", route), ("status", str(status)))), 0))


async def test_deep_nesting_and_lone_surrogates_answer_422_and_are_counted(
    desk: Desk, redis: Redis, venue: str, caplog: pytest.LogCaptureFixture
) -> None:
    nested = await desk.client.post("/v1/jobs", data=b"[" * 200_000, headers=desk.auth("desk"))
    assert nested.status == 422 and nested.content_type == PROBLEM
    assert "nested too deep" in (await nested.json())["detail"]
    surrogate = b'{"attendee_id": "s1", "name": "Ada \\ud800 Lovelace"}'
    lone = await desk.client.post("/v1/jobs", data=surrogate, headers=desk.auth("desk"))
    assert lone.status == 422 and lone.content_type == PROBLEM
    assert (await lone.json())["errors"] == [
        {"field": "name", "message": "contains a lone surrogate, not a character (U+D800)"}
    ]
    for constant in (b"NaN", b"Infinity"):
        body = b'{"attendee_id": ' + constant + b', "name": "N"}'
        resp = await desk.client.post("/v1/jobs", data=body, headers=desk.auth("desk"))
        assert resp.status == 422 and "not a JSON value" in (await resp.json())["detail"]
    huge = await desk.client.post("/v1/jobs", data=b'{"attendee_id": 1e400, "name": "N"}', headers=desk.auth("desk"))
    assert huge.status == 422 and (await huge.json())["errors"][0]["field"] == "attendee_id"
    assert await redis.llen(Keys(venue).pool) == 0
    metrics = await (await desk.client.get("/metrics")).text()
    assert metric(metrics, "/v1/jobs", 422) == 5
    assert "Traceback" not in caplog.text


def test_numbers_that_are_no_ids_and_names_that_hide_themselves_are_refused() -> None:
    for bad in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(JobError, match="finite number"):
            parse_job({"attendee_id": bad, "name": "N"})
    assert parse_job({"attendee_id": 1042, "name": "N"}).attendee_id == "1042"
    refused = {
        "Ali\u202ecod.exe": "bidi override or isolate (U+202E)",
        "\u2066Eve\u2069": "bidi override or isolate (U+2066)",
        "\u200b\u200c\u200d": "no visible character",
        "\u3164": "no visible character",
        "\ufeff \u2060": "no visible character",
        "x\ud800": "lone surrogate",
    }
    for name, why in refused.items():
        with pytest.raises(JobError, match=re.escape(why)):
            parse_job({"attendee_id": "a", "name": name})
    # Joiners inside words of the scripts that need them, and right-to-left names, are names.
    for name in ("क्\u200dष", "می\u200cخواهم", "שרה כהן", "Zoë Ağaoğlu", "\u200fسارا"):
        assert parse_job({"attendee_id": "a", "name": name}).name == name


def test_enqueue_file_reports_a_line_with_a_lone_surrogate_as_a_bad_row(tmp_path: Path) -> None:
    path = tmp_path / "people.jsonl"
    path.write_text(
        '{"attendee_id": "a1", "name": "Ok"}\n'
        '{"attendee_id": "a2", "name": "bad \\ud800 x"}\n'
        '{"attendee_id": "a3", "name": "Ok", "note\\udc00": "x"}\n'
        '{"attendee_id": "a4", "name": "Also ok"}\n',
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "agent", "enqueue", "--file", str(path), "--dry-run", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"BADGE_REDIS_URL": "redis://127.0.0.1:1/0", "BADGE_VENUE": "v", "PATH": "/usr/bin:/bin"},
    )
    assert "Traceback" not in result.stderr, result.stderr
    summary = json.loads(result.stdout)
    assert summary["enqueued"] == 3 and summary["rejected"] == 1
    assert summary["rejected_rows"] == [
        {"row": 2, "reason": "name: contains a lone surrogate, not a character (U+D800)"}
    ]


async def test_kiosk_and_board_pages_carry_csp_frame_and_nosniff_headers(
    desk: Desk, redis_server: RedisServer, venue: str
) -> None:
    kiosk = await desk.client.get("/kiosk")
    redis = Redis.from_url(redis_server.url)
    async with TestClient(TestServer(make_board_app(Board(redis, venue, interval=0.1)))) as client:
        board_page = await client.get("/")
        for page in (kiosk, board_page):
            assert page.status == 200
            csp = page.headers["Content-Security-Policy"]
            assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "'unsafe-inline'" not in csp
            assert page.headers["X-Frame-Options"] == "DENY"
            assert page.headers["X-Content-Type-Options"] == "nosniff"
    await redis.aclose()


def test_the_board_and_the_intake_do_not_share_a_default_port() -> None:
    (listen,) = [p.default for p in board.params if p.name == "listen"]
    intake = IntakeConfig(venue="v", tokens=Path("tokens.json")).listen
    assert str(listen).rsplit(":", 1)[1] != intake.rsplit(":", 1)[1]


def test_a_redis_urls_password_is_masked_in_config_errors_and_log_lines(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "venue: v\nprinter:\n  name: p1\n  driver: {language: zpl, transport: tcp, host: 127.0.0.1, port: 9100}\n"
        "redis:\n  url: http://badge:s3cr3t-pw@redis.venue.lan:6379/0\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "agent", "check-config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 78 and "redis.url" in result.stderr
    assert "s3cr3t-pw" not in result.stderr and "http://badge:***@redis.venue.lan" in result.stderr
    record = logging.LogRecord("t", logging.ERROR, __file__, 1, "cannot reach %s", ("rediss://u:pw0rd@h:6380/0",), None)
    for formatter in (KeyValueFormatter(with_time=False), JsonFormatter()):
        line = formatter.format(record)
        assert "pw0rd" not in line and "u:***@h" in line
    assert "rediss://u:***@h:6380/0" in KeyValueFormatter(with_time=False).format(record)
