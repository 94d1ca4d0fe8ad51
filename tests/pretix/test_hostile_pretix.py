"""A pretix that misbehaves cannot keep the sync reading for ever, fill its memory or stop it being stopped.

A fake server (tests/pretix/hostile.py) stands at the ``--pretix`` address: pages that link back to themselves or to
a page already read, pages that never end, a count past any event, an answer that never comes. Each ends with one
line naming what pretix did and exit 69 (pretix fails on its side); SIGTERM and Ctrl-C stop a read wherever it is
within 5 s, exit 0. The commands run as the service runs them, in a process of their own, measured as the kernel
counts them (the peak resident size of that process).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from pretix_sync.changes import ListChanges
from pretix_sync.client import MAX_DOWNLOAD, MAX_RESULTS, PretixClient
from pretix_sync.errors import PretixConfigError, PretixError, PretixMisbehaves, ReadStopped
from pretix_sync.records import AttendeeRecord
from tests.pretix.hostile import LIST_ID, Scenario, Served, hostile_pretix, json_lines

ROOT = Path(__file__).resolve().parents[2]

#: The most a first read may hold resident, whatever pretix sends.
MAX_RESIDENT_MB = 300


def client(url: str, **kwargs: object) -> PretixClient:
    return PretixClient(url, "org", "ev", "hostile-test-token", attempts=1, **kwargs)  # type: ignore[arg-type]


async def read_all(c: PretixClient) -> int:
    n = 0
    async with c:
        async for _ in c.checkin_list_positions(LIST_ID):
            n += 1
    return n


async def refused(scenario: Scenario, **kwargs: object) -> tuple[PretixError, Served]:
    """The error that ends a read of the check-in list on a fake answering as ``scenario`` says, and what it served."""
    with hostile_pretix(scenario) as (url, served):
        with pytest.raises(PretixError) as caught:
            await read_all(client(url, **kwargs))
        return caught.value, served


# -- the client, in this process ---------------------------------------------------------------------------------


async def test_a_page_linked_to_itself_ends_the_read_naming_it() -> None:
    error, served = await refused(Scenario(count=120, loop="same"))
    assert isinstance(error, PretixMisbehaves)
    assert error.exit_code == 69
    assert "a page already read" in str(error) and "a loop" in str(error)
    assert f"/api/v1/organizers/org/events/ev/checkinlists/{LIST_ID}/positions/?page_size=50)" in str(error)
    assert served.pages == 1


async def test_a_page_linked_back_to_an_earlier_one_ends_the_read() -> None:
    error, served = await refused(Scenario(count=500, loop="back"))
    assert isinstance(error, PretixMisbehaves)
    assert re.search(r"links page 3 of .* to a page already read \(http.*\?page=2&page_size=50\)", str(error))
    assert served.pages == 3


async def test_pages_past_twice_the_announced_count_end_the_read_naming_the_count() -> None:
    error, served = await refused(Scenario(count=120))  # a new page every time, for ever
    assert isinstance(error, PretixMisbehaves)
    assert "first page announced 120" in str(error)
    assert "250 result(s) in 5 page(s)" in str(error)  # past twice 120: the page that went over
    assert "fails on its side" in str(error)
    assert served.pages == 5


async def test_a_count_over_the_cap_is_refused_before_reading_on() -> None:
    error, served = await refused(Scenario(count=10**9))
    assert isinstance(error, PretixMisbehaves)
    assert f"announces 1000000000 the positions of check-in list {LIST_ID}" in str(error)
    assert f"more than the {MAX_RESULTS} one listing may hold" in str(error)
    assert served.pages == 1


async def test_the_cap_holds_when_twice_the_count_is_over_it() -> None:
    error, served = await refused(Scenario(count=800), max_results=1000)
    assert isinstance(error, PretixMisbehaves)
    assert "1050 result(s) in 21 page(s) after its first page announced 800" in str(error)
    assert "more than the 1000 result(s) in 22 page(s)" in str(error)
    assert served.pages == 21


async def test_an_answer_over_20_mb_is_still_cut() -> None:
    error, _ = await refused(Scenario(count=1, positions=1, pad=MAX_DOWNLOAD + 1))
    assert isinstance(error, PretixConfigError)
    assert "is larger than 20 MB" in str(error)


async def test_an_honest_list_of_many_pages_is_read_whole() -> None:
    with hostile_pretix(Scenario(count=1234, positions=1234)) as (url, served):
        assert await read_all(client(url)) == 1234
    assert served.pages == 25


async def test_a_stop_is_seen_before_the_next_page() -> None:
    stop = asyncio.Event()
    with hostile_pretix(Scenario(count=100_000, positions=100_000)) as (url, served):
        async with client(url, stop=stop) as c:
            n = 0
            with pytest.raises(ReadStopped):
                async for _ in c.checkin_list_positions(LIST_ID):
                    n += 1
                    if n == 120:
                        stop.set()
    assert n == 150  # the rest of the page under way, no page more
    assert served.pages == 3


async def test_a_stop_is_seen_between_two_batches_of_records() -> None:
    stop = asyncio.Event()
    batches: list[int] = []

    async def write(records: list[AttendeeRecord]) -> None:
        batches.append(len(records))
        stop.set()

    with hostile_pretix(Scenario(count=5000, positions=5000)) as (url, served):
        async with client(url) as c:  # the client is not told: the read's own look between batches stops it
            with pytest.raises(ReadStopped):
                await ListChanges(c, LIST_ID).read_into(write, stop)
    assert batches == [500]
    assert served.pages == 20  # the page that filled the second batch, which was not handed on


# -- the commands, as the service runs them ------------------------------------------------------------------------


def command_args(url: str, token: Path) -> list[str]:
    return ["--pretix", url, "--event", "org/ev", "--token-file", str(token), "--checkin-list", str(LIST_ID)]


@pytest.fixture
def token(tmp_path: Path) -> Path:
    path = tmp_path / "pretix.token"
    path.write_text("hostile-test-token\n", encoding="utf-8")
    path.chmod(0o600)
    return path


def resident_mb(pid: int, field: str = "VmRSS") -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (its peak since the process's exec) of a live process, in MB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    kb = next((line.split()[1] for line in status.splitlines() if line.startswith(f"{field}:")), "0")
    return int(kb) / 1024


def run_measured(argv: list[str], log: Path, deadline: float) -> tuple[int, float]:
    """Runs a command to its end: its exit status and peak resident size in MB (the kernel's high-water mark of that
    process since its exec, ``VmHWM``, read while it runs: ``ru_maxrss`` would also count the test process's own
    size at the fork, hundreds of MB late in a full run). Killed, failing the test, past ``deadline`` seconds or twice
    the memory allowed: a sync without bounds must not take the test machine down with it."""
    with log.open("wb") as err:
        process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    started = time.monotonic()
    peak = 0.0
    while True:
        peak = max(peak, resident_mb(process.pid, "VmHWM"))
        pid, status, _ = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            assert peak > 10, f"the process's size was never read ({peak:.1f} MB)"  # a Python process is 30+ MB
            return process.returncode, peak
        rss = resident_mb(process.pid)
        if rss > 2 * MAX_RESIDENT_MB or time.monotonic() - started > deadline:
            process.kill()
            process.wait()
            raise AssertionError(
                f"killed at {rss:.0f} MB after {time.monotonic() - started:.0f} s: {log.read_text()[-2000:]}"
            )
        time.sleep(0.1)  # how often the watchdog looks; nothing is timed by it


def attendees_sync(server: RedisServer, venue: str, url: str, token: Path) -> list[str]:
    return [sys.executable, "-m", "agent", "attendees", "sync", "--redis", server.url, "--venue", venue,
            *command_args(url, token)]  # fmt: skip


def read_command(url: str, token: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "pretix_sync", *command_args(url, token), "-o", str(out)]


def test_attendees_sync_against_pages_that_loop_ends_with_69(
    redis_server: RedisServer, venue: str, token: Path, tmp_path: Path
) -> None:
    log = tmp_path / "sync.log"
    with hostile_pretix(Scenario(count=120, loop="same")) as (url, served):
        code, _ = run_measured(attendees_sync(redis_server, venue, url, token), log, deadline=60)
    said = log.read_text()
    assert code == 69, said
    assert "a page already read" in said and "Traceback" not in said
    assert len(said.strip().splitlines()) == 1
    assert served.pages == 1


@pytest.mark.slow
def test_endless_new_pages_end_at_twice_the_count_in_bounded_memory(token: Path, tmp_path: Path) -> None:
    log = tmp_path / "read.log"
    with hostile_pretix(Scenario(count=60_000)) as (url, served):
        code, peak = run_measured(read_command(url, token, Path(os.devnull)), log, deadline=240)
    said = log.read_text()
    assert code == 69, said
    assert "first page announced 60000" in said and "Traceback" not in said
    assert served.pages == 2401  # 120,050 results: the page past twice the count is the last one asked for
    assert peak < MAX_RESIDENT_MB, f"{peak:.0f} MB"


@pytest.mark.slow
async def test_a_first_read_of_100000_tickets_stays_under_300_mb(
    redis: Redis, redis_server: RedisServer, venue: str, token: Path, tmp_path: Path
) -> None:
    log = tmp_path / "sync.log"
    with hostile_pretix(Scenario(count=100_000, positions=100_000)) as (url, _):
        argv = attendees_sync(redis_server, venue, url, token)
        code, peak = await asyncio.to_thread(run_measured, argv, log, 300)
    said = log.read_text()
    assert code == 0, said
    assert "100000 valid" in said and "added 100000" in said
    assert (await AttendeeStore(redis, venue).counts()).expected == 100_000
    assert peak < MAX_RESIDENT_MB, f"{peak:.0f} MB"


def stopped_in_time(argv_for: Callable[[str], list[str]], log: Path, sig: signal.Signals) -> tuple[int, str]:
    """Starts the command against a pretix whose 30th page never comes and sends ``sig`` once that request is under
    way: the exit status, which must come within 5 s, and what the command said."""
    with hostile_pretix(Scenario(count=100_000, positions=100_000, stall_at=30)) as (url, served):
        with log.open("wb") as err:
            process = subprocess.Popen(argv_for(url), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        try:
            assert served.stalled.wait(120), log.read_text()
            process.send_signal(sig)
            code = process.wait(timeout=5)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    return code, log.read_text()


def test_sigterm_stops_attendees_sync_within_5_s_while_pretix_is_silent(
    redis_server: RedisServer, venue: str, token: Path, tmp_path: Path
) -> None:
    code, said = stopped_in_time(
        lambda url: attendees_sync(redis_server, venue, url, token), tmp_path / "sync.log", signal.SIGTERM
    )
    assert code == 0, said
    assert "stopped during the first read" in said and "Traceback" not in said


def test_ctrl_c_stops_the_read_command_within_5_s_while_pretix_is_silent(token: Path, tmp_path: Path) -> None:
    out = tmp_path / "read.jsonl"
    code, said = stopped_in_time(lambda url: read_command(url, token, out), tmp_path / "read.log", signal.SIGINT)
    assert code == 0, said
    assert "stopped during the first read" in said and "Traceback" not in said
    assert len(json_lines(out.read_text())) == 1000  # what was read before stays: two batches of 500
