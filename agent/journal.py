"""The agent's local journal: what it sent to its printer, written before Redis hears of it.

Redis can lose a reply (a restart, a failover, a cut cable) and the agent can crash between the printer finishing a
badge and ``confirm``. The journal closes both gaps: ``sending`` is written before the first byte goes to the
printer, ``printed`` as soon as the printer proves the badge came out. After a restart or reconnect the agent reads
it to confirm a badge that did print instead of leaving it ambiguous.

It also remembers the last ``history`` badges this printer confirmed: if Redis loses a confirm (a restart that
lost its last writes, a failover to a replica that had not received it) and the job comes back, the agent confirms
it again instead of printing a second copy. And the last ``history`` attempts whose outcome was unknown (``unknown``,
written before the job is released as maybe printed, then ``closed``): a failover can lose that release's flag too,
and the agent flags the job again (agent/recovery.py). A file written before the ``unknown`` stage existed reads as
one without unknown outcomes.

Durability without an fsync per badge. A record handed to the kernel (``write``) survives the agent crashing, being
killed or restarted: only the machine going down (power cut, kernel panic) can lose what was not yet synced. So the
file remembers the Linux boot it was written under. Started in the same boot, the agent trusts the journal
completely, exactly as if every record had been fsynced. Started after a reboot, the last second or so of records
may be missing, so a job still held in in-flight without a record is treated as maybe printed (staff are told where
to look) rather than as never sent. The agent syncs the file about once a second off the hot path (``sync``), which
bounds what a reboot can take with it, and spares a Pi's SD card two flushes per badge. Where the boot cannot be
identified (no ``/proc/sys/kernel/random/boot_id``), every ``sending`` and ``printed`` record is synced before the
agent goes on (``syncs_each_record``).

The file is append-only JSON lines, rewritten down to the open records and the history once it grows past
``max_records``, so it stays small. A missing path keeps the journal in memory (it then covers reconnects, not
crashes).

A disk that refuses a record (full, read-only, failing card) does not stop the agent, and no ``Journal`` method
raises ``OSError`` after the journal is open: the first failure is logged loudly once (``failure`` keeps it for
health reports) and the journal goes on in memory. Going on rather than stopping is deliberate: ownership lives in
Redis, not in this file, so the badge being handled keeps its attempt and the printer keeps printing; what is lost
is only the crash cover (a crash from now on leaves a held badge to be released as maybe printed, staff told where
to look). Stopping would take a working printer out of an event for a disk that only guards against crashes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.logs import kv

log = logging.getLogger(__name__)

#: ``unknown``: sent, outcome unknown, about to be released as maybe printed (open, like ``sending``);
#: ``unknown_history``: a recent unknown outcome, as a compaction writes it back (not open).
Stage = Literal["sending", "printed", "unknown", "closed", "history", "unknown_history"]

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def current_boot_id() -> str | None:
    """This Linux boot's random id, or None where the system does not tell."""
    try:
        return BOOT_ID.read_text(encoding="ascii").strip() or None
    except OSError:
        return None


THIS_BOOT = current_boot_id()  # fixed for the life of a process


@dataclass(frozen=True)
class Entry:
    job_id: str
    epoch: int
    stage: Stage


def record_line(job_id: str, epoch: int, stage: Stage) -> bytes:
    """One record as a line of JSON."""
    return _json_line({"job": job_id, "epoch": int(epoch), "stage": stage})


def _json_line(line: dict[str, Any]) -> bytes:
    return (json.dumps(line) + "\n").encode("utf-8")


class Journal:
    def __init__(
        self, path: Path | None, max_records: int = 2000, history: int = 500, boot_id: str | None = THIS_BOOT
    ) -> None:
        """``boot_id``: this machine's boot (tests pass another to play a reboot, None for a system without one)."""
        self.path = path
        self.max_records = max_records
        self.history = history
        self.boot_id = boot_id
        # See ``after_reboot``: set once by ``_load``, cleared only by ``earlier_work_settled``.
        self._after_reboot = False
        self._open: dict[str, Entry] = {}
        self._printed: OrderedDict[str, int] = OrderedDict()
        self._unknown: OrderedDict[str, int] = OrderedDict()  # recent unknown outcomes: job -> epoch
        self._records = 0
        # Kept open (one open() per record was a third of a badge's cost), and raw: a record is one os.write, with
        # no text layer encoding and flushing it on the way (written is what the durability rule needs).
        self._fd: int | None = None
        self._dirty = False
        # The disk error that put the journal in memory (see module doc), or None while records reach the file.
        self.failure: OSError | None = None
        # Syncs run in a worker thread; the lock keeps a compaction from closing the file under one.
        self._lock = threading.Lock()
        if path is not None:
            self._load(path)

    @property
    def after_reboot(self) -> bool:
        """True while the file read at start was last written under another boot and the work it was about is not
        settled yet: its unsynced tail may be gone (see module doc), so a held job without a record may have been
        sent. Read-only: ``earlier_work_settled`` is the one step that clears it."""
        return self._after_reboot

    def earlier_work_settled(self) -> None:
        """What an earlier process left (the jobs held in in-flight when it ended) is settled (agent/recovery.py):
        every record about work from now on is this process's own, so the journal is trusted completely."""
        self._after_reboot = False

    @property
    def syncs_each_record(self) -> bool:
        """True when ``sending`` and ``printed`` must be synced before going on: the boot cannot be told."""
        return self.path is not None and self.boot_id is None

    def _load(self, path: Path) -> None:
        if path.exists() and not path.is_file():
            return  # a device (``/dev/full`` in the tests): nothing to read back, records are written to it
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        last_boot: str | None = None
        for line in lines:
            try:
                raw = json.loads(line)
                if "boot" in raw:
                    last_boot = str(raw["boot"])
                    continue
                job_id, epoch, stage = str(raw["job"]), int(raw["epoch"]), raw["stage"]
            except (ValueError, KeyError, TypeError):
                # A torn last line from a power cut: the records before it are whole, this one never happened.
                log.warning("journal %s: skipping an unreadable line", path)
                continue
            self._apply(job_id, epoch, stage)
        self._records = len(lines)
        # Written under another boot (or before boots were recorded): its unsynced tail may be gone. Without a
        # boot id every record that matters was synced, so the file is complete whatever happened.
        self._after_reboot = bool(lines) and self.boot_id is not None and last_boot != self.boot_id

    def _apply(self, job_id: str, epoch: int, stage: Stage) -> None:
        if stage in {"printed", "history"}:
            self._remember(self._printed, job_id, epoch)
        elif stage in {"unknown", "unknown_history"}:
            self._remember(self._unknown, job_id, epoch)
        if stage in {"closed", "history", "unknown_history"}:
            self._open.pop(job_id, None)
        else:
            self._open[job_id] = Entry(job_id, epoch, stage)  # only open records need one: lookup() returns it

    def _remember(self, recent: OrderedDict[str, int], job_id: str, epoch: int) -> None:
        recent[job_id] = epoch
        recent.move_to_end(job_id)
        while len(recent) > self.history:
            recent.popitem(last=False)

    def lookup(self, job_id: str) -> Entry | None:
        return self._open.get(job_id)

    def printed_here(self, job_id: str) -> int | None:
        """The epoch under which this printer printed ``job_id``, if it did recently."""
        return self._printed.get(job_id)

    def recent_prints(self, n: int) -> list[tuple[str, int]]:
        """The last ``n`` jobs printed here, with their epochs (for re-confirming after a Redis failover)."""
        return list(self._printed.items())[-n:]

    def recent_unknown(self, n: int) -> list[tuple[str, int]]:
        """The last ``n`` jobs whose outcome here was unknown (released as maybe printed), with their epochs (for
        flagging them again after a Redis failover)."""
        return list(self._unknown.items())[-n:]

    def open_entries(self) -> list[Entry]:
        return list(self._open.values())

    async def append(self, job_id: str, epoch: int, stage: Stage, *, durable: bool = False) -> None:
        """Record a stage: from when this returns it survives the agent crashing (a reboot: see the module doc).

        ``durable``: the agent acts on this record next (``sending``: bytes go to the printer; ``printed``: Redis
        hears of it), so where the boot cannot be told it is synced before returning. Syncs and compactions run in
        a worker thread: a Pi's SD card can take tens of ms, and the heartbeat must not wait for it.
        """
        self._apply(job_id, epoch, stage)
        if self.path is None or self.failure is not None:
            return
        if self._records >= self.max_records:
            await asyncio.to_thread(self._compact, self.path)  # the rewrite holds this record and is synced
            return
        self._write_record(job_id, epoch, stage)
        if durable and self.syncs_each_record:
            await asyncio.to_thread(self.sync)

    def _write_record(self, job_id: str, epoch: int, stage: Stage) -> None:
        """Hand one record to the kernel."""
        assert self.path is not None
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
                if self.boot_id is not None:
                    # Every record after this line was written in this boot.
                    self._write_bytes(_json_line({"boot": self.boot_id}))
            self._write_bytes(record_line(job_id, epoch, stage))
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """The disk refused a record: say so once, loudly, and go on in memory (see module doc for why)."""
        if self.failure is not None:
            return
        # The advice is the message and the path and error are fields of their own: a log value is cut at 200
        # characters (core/logs.py), and a long path in the message would cut the advice off.
        log.error(
            "journal cannot be written: running without crash cover (a crash or reboot leaves the badge being "
            "printed as maybe printed). Fix its directory or disk (badge-agent check-config), then restart",
            extra=kv(journal=str(self.path), error=str(exc)),
        )
        self.failure = exc
        self._dirty = False
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):  # the descriptor is released even when close reports an error
                os.close(fd)

    def _write_bytes(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:  # a regular file takes it whole; a short write (disk nearly full) must not lose the tail
            view = view[os.write(self._fd, view) :]
        self._dirty = True
        self._records += 1

    @property
    def dirty(self) -> bool:
        """True when records were written since the last sync."""
        return self._dirty

    def sync(self) -> None:
        """Make every record written so far durable (fdatasync). Safe to call from a worker thread."""
        failed: OSError | None = None
        with self._lock:  # held through the sync: a compaction must not close the file under it
            if self._fd is None or not self._dirty:
                return
            self._dirty = False  # before the sync: a record written during it is left dirty for the next one
            try:
                os.fdatasync(self._fd)
            except OSError as exc:
                failed = exc
        if failed is not None:
            self._fail(failed)  # takes the lock itself

    def close(self) -> None:
        self.sync()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _compact(self, path: Path) -> None:
        """Rewrite the file down to the histories and the open records (synced, then renamed into place)."""
        try:
            self._rewrite(path)
        except OSError as exc:
            self._fail(exc)

    def _rewrite(self, path: Path) -> None:
        self.close()
        tmp = path.with_name(path.name + ".tmp")
        # Every few hundred badges, in a worker thread: the history's lines are built as the records are (record_line).
        lines = [_json_line({"boot": self.boot_id})] if self.boot_id is not None else []
        lines += [record_line(j, epoch, "history") for j, epoch in self._printed.items()]
        lines += [record_line(j, epoch, "unknown_history") for j, epoch in self._unknown.items()]
        lines += [record_line(e.job_id, e.epoch, e.stage) for e in self._open.values()]
        with tmp.open("wb") as fh:
            fh.write(b"".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        self._records = len(lines)
