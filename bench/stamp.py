"""A simulated printer that notes when the first byte of each badge reaches it (``print()`` entry).

All times are taken in the bench process (``time.perf_counter``) so enqueue and first byte are on one clock.
"""

from __future__ import annotations

import time
from pathlib import Path

from drivers.base import Badge, PrintResult
from drivers.sim import SimDriver


class StampDriver(SimDriver):
    """``SimDriver`` plus a shared record of first-byte times: ``stamps`` (in order) and ``by_job``."""

    def __init__(
        self,
        printer_name: str,
        print_time: float,
        stamps: list[float],
        by_job: dict[str, float] | None = None,
        print_log: Path | None = None,
        control_file: Path | None = None,
    ) -> None:
        super().__init__(printer_name, print_time, control_file=control_file, print_log=print_log)
        self.stamps = stamps
        self.by_job = by_job if by_job is not None else {}
        self.wall: list[float] = []  # time.time() of each first byte, to line up with MONITOR's clock

    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        now = time.perf_counter()
        self.stamps.append(now)
        self.wall.append(time.time())
        self.by_job.setdefault(badge.job_id, now)
        return await super().print(data, badge, timeout)
