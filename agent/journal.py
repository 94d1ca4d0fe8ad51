"""The agent's local journal: what it sent to its printer, on disk before Redis hears of it.

Redis can lose a reply (a restart, a failover, a cut cable) and the agent can crash between the printer finishing a
badge and ``confirm``. The journal closes both gaps: ``sending`` is fsynced before the first byte goes to the
printer, ``printed`` as soon as the printer proves the badge came out. After a restart or reconnect the agent reads
it to confirm a badge that did print instead of leaving it ambiguous.

It also remembers the last ``history`` badges this printer confirmed: if Redis loses a confirm (a restart that
lost its last writes, a failover to a replica that had not received it) and the job comes back, the agent confirms
it again instead of printing a second copy.

The file is append-only JSON lines, fsynced per record, and rewritten down to the open records and the history once
it grows past ``max_records``, so it stays small on a Pi's SD card. A missing path keeps the journal in memory (it
then covers reconnects, not crashes).
"""

from __future__ import annotations

import json
import logging
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

log = logging.getLogger(__name__)

Stage = Literal["sending", "printed", "closed", "history"]


@dataclass(frozen=True)
class Entry:
    job_id: str
    epoch: int
    stage: Stage


class Journal:
    def __init__(self, path: Path | None, max_records: int = 2000, history: int = 500) -> None:
        self.path = path
        self.max_records = max_records
        self.history = history
        self._open: dict[str, Entry] = {}
        self._printed: OrderedDict[str, int] = OrderedDict()
        self._records = 0
        self._file: TextIO | None = None  # kept open: one open() per record was a third of a badge's cost
        if path is not None:
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        for line in lines:
            try:
                raw = json.loads(line)
                entry = Entry(str(raw["job"]), int(raw["epoch"]), raw["stage"])
            except (ValueError, KeyError, TypeError):
                # A torn last line from a power cut: the records before it are whole, this one never happened.
                log.warning("journal %s: skipping an unreadable line", path)
                continue
            self._apply(entry)
        self._records = len(lines)

    def _apply(self, entry: Entry) -> None:
        if entry.stage in ("printed", "history"):
            self._printed[entry.job_id] = entry.epoch
            self._printed.move_to_end(entry.job_id)
            while len(self._printed) > self.history:
                self._printed.popitem(last=False)
        if entry.stage in ("closed", "history"):
            self._open.pop(entry.job_id, None)
        else:
            self._open[entry.job_id] = entry

    def lookup(self, job_id: str) -> Entry | None:
        return self._open.get(job_id)

    def printed_here(self, job_id: str) -> int | None:
        """The epoch under which this printer printed ``job_id``, if it did recently."""
        return self._printed.get(job_id)

    def recent_prints(self, n: int) -> list[tuple[str, int]]:
        """The last ``n`` jobs printed here, with their epochs (for re-confirming after a Redis failover)."""
        return list(self._printed.items())[-n:]

    def open_entries(self) -> list[Entry]:
        return list(self._open.values())

    def record(self, job_id: str, epoch: int, stage: Stage) -> None:
        entry = Entry(job_id, epoch, stage)
        self._apply(entry)
        if self.path is None:
            return
        if self._records >= self.max_records:
            self._compact(self.path)
            return
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(json.dumps({"job": job_id, "epoch": epoch, "stage": stage}) + "\n")
        self._file.flush()
        if stage != "closed":
            # "sending" must be on disk before the first byte goes out, "printed" before Redis hears of it. A lost
            # "closed" costs nothing: replaying "printed" re-confirms under the same epoch, which is a no-op.
            os.fdatasync(self._file.fileno())
        self._records += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _compact(self, path: Path) -> None:
        self.close()
        tmp = path.with_name(path.name + ".tmp")
        lines = [{"job": j, "epoch": epoch, "stage": "history"} for j, epoch in self._printed.items()]
        lines += [{"job": e.job_id, "epoch": e.epoch, "stage": e.stage} for e in self._open.values()]
        with tmp.open("w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        self._records = len(lines)
