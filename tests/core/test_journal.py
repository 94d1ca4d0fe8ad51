"""The journal: written records survive the agent dying; after a reboot, what was held is treated as maybe printed."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
from pathlib import Path

import pytest
from redis.asyncio import Redis

from agent.journal import THIS_BOOT, Journal
from agent.printer import Printer
from agent.recovery import Recovered, Recovery
from cli.redis_server import RedisServer
from core.logs import KeyValueFormatter
from drivers.sim import SimDriver
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, running_agent
from tests.support.prints import print_log_copies
from tests.support.waiting import wait_until


async def test_written_records_are_read_back_by_the_next_process_of_the_same_boot(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal(path, boot_id="boot-1")
    await journal.append("a", 1, "sending")
    await journal.append("b", 1, "sending")
    await journal.append("b", 1, "printed")
    # No sync, no close: the process "dies" here. The kernel still holds what was written.
    again = Journal(path, boot_id="boot-1")
    assert not again.after_reboot
    entry = again.lookup("a")
    assert entry is not None and entry.stage == "sending"
    assert again.printed_here("b") == 1


async def test_unknown_outcomes_are_remembered_across_restarts_and_compactions(tmp_path: Path) -> None:
    """An unknown outcome stays open until closed, and is remembered after (agent/recovery.py flags it again)."""
    path = tmp_path / "j"
    journal = Journal(path, max_records=8, boot_id="boot-1")
    await journal.append("u", 3, "sending")
    await journal.append("u", 3, "unknown")
    entry = journal.lookup("u")
    assert entry is not None and entry.stage == "unknown"  # released next: a crash here releases it as maybe printed
    await journal.append("u", 3, "closed")
    assert journal.lookup("u") is None and journal.recent_unknown(10) == [("u", 3)]
    assert Journal(path, boot_id="boot-1").recent_unknown(10) == [("u", 3)]
    for i in range(8):  # past max_records: the file is rewritten down to the histories
        await journal.append(f"p{i}", 1, "printed")
    compacted = Journal(path, boot_id="boot-1")
    assert compacted.recent_unknown(10) == [("u", 3)] and compacted.lookup("u") is None
    assert compacted.printed_here("p0") == 1
    # A file from before the unknown stage existed: read as before, with no unknown outcomes.
    old = tmp_path / "old"
    old.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in (
        {"job": "a", "epoch": 1, "stage": "sending"}, {"job": "a", "epoch": 1, "stage": "closed"},
        {"job": "b", "epoch": 2, "stage": "history"},
    )))  # fmt: skip
    before = Journal(old, boot_id=None)
    assert before.recent_unknown(10) == [] and before.printed_here("b") == 2 and before.open_entries() == []


async def test_a_journal_from_another_boot_may_have_lost_its_tail(tmp_path: Path) -> None:
    path = tmp_path / "j"
    await Journal(path, boot_id="boot-1").append("a", 1, "sending")
    assert Journal(path, boot_id="boot-2").after_reboot
    assert not Journal(tmp_path / "new", boot_id="boot-2").after_reboot  # nothing was written: nothing lost


async def test_the_reboot_flag_is_cleared_only_once_recovery_settled_the_earlier_work(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    """The flag has one writer after the file is read: the journal's own step, which recovery takes at the end of
    its first run. Nothing else can clear it, this process's own records included."""
    path = tmp_path / "j"
    await Journal(path, boot_id="boot-1").append("a", 1, "sending")
    journal = Journal(path, boot_id="boot-2")
    assert journal.after_reboot
    with pytest.raises(AttributeError):
        journal.after_reboot = False  # type: ignore[misc]
    await journal.append("b", 2, "sending")
    await journal.append("b", 2, "closed")
    journal.sync()
    assert journal.after_reboot
    recovery = Recovery(Store(redis, venue), journal, Printer(SimDriver("desk-1", 0.0), 1.0, 1.0), "desk-1", "", 3)

    async def resume(job_id: str) -> None:
        raise AssertionError(f"nothing is held, yet {job_id} was resumed")

    await recovery.run(
        resume, Recovered(), stopping=True, printer_ready=lambda: True, drained=lambda: False, master_moved=False
    )
    assert not journal.after_reboot and not recovery.first_run
    assert journal.lookup("a") is None  # the earlier process's open record was settled (nothing held it)


def test_records_written_before_boots_were_recorded_count_as_after_a_reboot(tmp_path: Path) -> None:
    path = tmp_path / "j"
    path.write_text(json.dumps({"job": "a", "epoch": 1, "stage": "sending"}) + "\n", encoding="utf-8")
    assert Journal(path, boot_id="boot-1").after_reboot


async def test_without_a_boot_id_every_record_that_matters_is_synced(tmp_path: Path) -> None:
    unknown = Journal(tmp_path / "j", boot_id=None)
    assert unknown.syncs_each_record
    await unknown.append("a", 1, "sending", durable=True)
    # Synced records are complete whatever happened to the machine: no reboot rule.
    assert not Journal(tmp_path / "j", boot_id=None).after_reboot
    assert not Journal(tmp_path / "k", boot_id="boot-1").syncs_each_record
    assert not Journal(None, boot_id=None).syncs_each_record


async def test_sync_clears_dirty_and_compaction_keeps_the_boot(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal(path, max_records=10, boot_id="boot-1")
    await journal.append("a", 1, "sending")
    assert journal.dirty
    journal.sync()
    assert not journal.dirty
    for i in range(20):
        await journal.append(f"p{i}", 1, "printed")
        await journal.append(f"p{i}", 1, "closed")
    journal.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 25  # compacted
    again = Journal(path, boot_id="boot-1")
    assert not again.after_reboot
    assert again.printed_here("p19") == 1 and again.lookup("a") is not None


def test_the_machine_has_a_boot_id() -> None:
    # The CI runs on Linux; without a boot id the agent falls back to a sync per record (tested above).
    assert THIS_BOOT


async def _hold_in_inflight(redis: Redis, venue: str, tmp_path: Path, boot: str) -> str:
    """A job the agent had taken (moved into its in-flight list) when its machine went down, and a journal file that
    was last written under ``boot`` and holds nothing about that job."""
    store = Store(redis, venue)
    k = Keys(venue)
    (job_id,) = await enqueue_many(store, 1, "held")
    assert await redis.lmove(k.pool, k.inflight("desk-1"), "RIGHT", "LEFT") == job_id.encode()
    lines = [
        {"boot": boot},
        {"job": "older", "epoch": 1, "stage": "printed"},
        {"job": "older", "epoch": 1, "stage": "closed"},
    ]
    (tmp_path / "desk-1.journal").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return job_id


async def test_a_badge_held_across_a_reboot_is_reprinted_flagged(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Its "sending" record may have been lost with the machine: staff are told where to look for a first copy."""
    job_id = await _hold_in_inflight(redis, venue, tmp_path, "an-earlier-boot")
    k = Keys(venue)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.0) as agent:
        await wait_until(lambda: _state(redis, k, job_id, b"printed"))
        assert not agent.journal.after_reboot  # settled once, then trusted
    job = await redis.hgetall(k.job(job_id))
    assert job[b"maybe_printed"] == b"1" and b"desk-1" in job[b"maybe_printed_where"]
    assert job[b"maybe_duplicate"] == b"1"
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {job_id: 1}


async def test_a_badge_held_when_only_the_agent_died_is_printed_without_a_flag(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Same boot: the journal is complete, and it says nothing was sent."""
    assert THIS_BOOT is not None
    job_id = await _hold_in_inflight(redis, venue, tmp_path, THIS_BOOT)
    k = Keys(venue)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.0) as agent:
        await wait_until(lambda: _state(redis, k, job_id, b"printed"))
        # The sync task makes the records durable within about a heartbeat interval, off the hot path.
        await wait_until(lambda: not agent.journal.dirty, timeout=5)
    job = await redis.hgetall(k.job(job_id))
    assert job[b"maybe_printed"] == b"0" and job[b"maybe_duplicate"] == b"0"
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {job_id: 1}


async def _state(redis: Redis, k: Keys, job_id: str, state: bytes) -> bool:
    await asyncio.sleep(0)
    return await redis.hget(k.job(job_id), "state") == state


async def test_records_with_odd_ids_are_read_back(tmp_path: Path) -> None:
    odd = ['quote"d', "back\\slash", "tab\there", "naïve", "not utf-8 \udcff", "plain-1"]
    journal = Journal(tmp_path / "j", boot_id="boot-1")
    for i, job_id in enumerate(odd):
        await journal.append(job_id, i, "sending")
    again = Journal(tmp_path / "j", boot_id="boot-1")
    assert [(e.job_id, e.epoch, e.stage) for e in again.open_entries()] == [
        (j, i, "sending") for i, j in enumerate(odd)
    ]


async def test_a_journal_on_a_full_disk_says_so_once_and_goes_on_in_memory(caplog: pytest.LogCaptureFixture) -> None:
    journal = Journal(Path("/dev/full"), boot_id="boot-1")  # every write fails with ENOSPC, like a full disk
    await journal.append("a", 1, "sending", durable=True)
    await journal.append("a", 1, "printed", durable=True)
    journal.sync()
    assert isinstance(journal.failure, OSError) and journal.failure.errno == errno.ENOSPC
    assert journal.printed_here("a") == 1  # kept in memory: a reconnect still confirms it rather than reprinting
    failures = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(failures) == 1 and failures[0].fields["journal"] == "/dev/full"  # type: ignore[attr-defined]
    journal.close()


async def test_the_journal_failure_line_keeps_its_advice_however_long_the_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A log value is cut at 200 characters: the advice must not follow a long path and an error quoting it."""
    path = tmp_path / ("d" * 60) / "hall-a-1.journal"  # its directory does not exist: the first record fails
    journal = Journal(path, boot_id="boot-1")
    await journal.append("a", 1, "sending", durable=True)
    assert journal.failure is not None
    [record] = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    line = KeyValueFormatter(with_time=False).format(record)
    assert "running without crash cover" in line and "then restart" in line, line
    assert f"journal={path}" in line and "No such file or directory" in line, line
    journal.close()


async def test_an_agent_whose_journal_disk_is_full_prints_every_badge_once_without_losing_an_attempt(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    job_ids = await enqueue_many(store, 3, "full")
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.0, journal="/dev/full") as agent:
        await wait_until(lambda: _all_printed(redis, k, job_ids))
        assert agent.journal.failure is not None
        assert agent.snapshot().redis_errors == 0  # the disk error is not taken for a Redis outage
    for job_id in job_ids:
        assert await redis.hget(k.job(job_id), "attempts") == b"1"
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == dict.fromkeys(job_ids, 1)


async def _all_printed(redis: Redis, k: Keys, job_ids: list[str]) -> bool:
    return all([await _state(redis, k, job_id, b"printed") for job_id in job_ids])


async def test_syncs_and_compactions_run_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pi's SD card can take tens of ms to sync: the heartbeat, on the event loop, must never wait for it."""
    loop_thread = threading.get_ident()
    synced_on: list[int] = []
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def fsync(fd: int) -> None:
        synced_on.append(threading.get_ident())
        real_fsync(fd)

    def fdatasync(fd: int) -> None:
        synced_on.append(threading.get_ident())
        real_fdatasync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    # No boot id: every durable record is synced; 6 records: the seventh append compacts.
    journal = Journal(tmp_path / "j", max_records=6, boot_id=None)
    for i in range(5):
        await journal.append(f"p{i}", 1, "printed", durable=True)
        await journal.append(f"p{i}", 1, "closed")
    assert len(synced_on) >= 4  # three syncs and the compaction's file and directory
    assert loop_thread not in synced_on
    assert Journal(tmp_path / "j", boot_id=None).printed_here("p4") == 1  # the compacted file holds the history
    journal.close()


async def test_a_print_the_journal_recorded_is_confirmed_by_recovery_with_whose_word_it_is_on(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """The agent died between the printer's evidence and the confirm: the restarted agent's recovery confirms it from
    the journal, and says whose word the print is on, as the pull loop's confirm does."""
    assert THIS_BOOT is not None
    store = Store(redis, venue)
    k = Keys(venue)
    (job_id,) = await enqueue_many(store, 1, "replayed")
    assert await redis.lmove(k.pool, k.inflight("desk-1"), "RIGHT", "LEFT") == job_id.encode()
    begun = await store.begin("desk-1", "Hall A", job_id)
    lines = [
        {"boot": THIS_BOOT},
        {"job": job_id, "epoch": begun.epoch, "stage": "sending"},
        {"job": job_id, "epoch": begun.epoch, "stage": "printed"},
    ]
    (tmp_path / "desk-1.journal").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.0) as agent:
        await wait_until(lambda: _state(redis, k, job_id, b"printed"))
        assert agent.pull.printed == 1
    job = await redis.hgetall(k.job(job_id))
    assert job[b"confirmed_by"] == b"device" and job[b"maybe_duplicate"] == b"0"
    assert not print_log_copies(tmp_path / "desk-1.prints.jsonl")  # confirmed, not printed again
