"""Reading what the simulated printers printed: their print logs (``<name>.prints.jsonl``, drivers/sim.py), for the
tests and the benches."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any


def read_print_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written right now
    return out


def print_log_copies(*logs: Path, complete_only: bool = True) -> collections.Counter[str]:
    """job id -> copies printed, over the given print logs (a missing log printed nothing)."""
    copies: collections.Counter[str] = collections.Counter()
    for log in logs:
        for entry in read_print_log(log):
            if entry["complete"] or not complete_only:
                copies[entry["job_id"]] += 1
    return copies


def printed_lines(folder: Path) -> int:
    """Labels out of every simulated printer whose print log is in ``folder``."""
    return sum(len(read_print_log(log)) for log in folder.glob("*.prints.jsonl"))
