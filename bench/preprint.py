"""Pre-printed badges at conference scale: planning a run of 50,000 attendees, and a 5,000-badge PDF.

Run: .venv/bin/python -m bench.preprint [--plan-size 50000] [--pdf-size 5000] [--dpi 300]
Prints a table and writes bench/results/preprint.json.

On a private redis-server (no AOF):
1. Plan: ``--plan-size`` attendees (names in Latin with accents, Greek, Cyrillic and Chinese, family name parts for
   half of them, as pretix gives them) are loaded, then ``PreprintStore.plan`` sorts them by the Unicode Collation
   Algorithm and writes 250 boxes of 200 (each box one script call, every attendee told where their badge is). The
   goal: <= 10 s.
2. PDF: a run of ``--pdf-size`` of another venue's attendees, 4x6 in badges at ``--dpi`` on A4, written by
   ``badge-agent preprint pdf`` as a user runs it (its own process, start included; the pages drawn by its worker
   processes, one a core). The goals: <= 90 s on 2 cores, and <= 200 MB: the peak resident set (VmHWM) of the
   command's process plus that of each drawing worker (the most any one of them reached, times their number).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from bench.common import ROOT, bench_main, fmt, redis_server, table, verdict
from preprint.store import PreprintStore

LATIN = ["Müller", "Kowalski", "Łukasiewicz", "García", "Øster", "Nguyễn", "O'Brien", "van der Berg", "Ünal", "Smith"]
GIVEN = ["Anna", "Zoë", "José", "Ólafur", "Ji-woo", "Chloé", "Łucja", "Søren", "Émile", "Ada"]
GREEK = ["Παπαδόπουλος", "Οικονόμου", "Γεωργίου"]
CYRILLIC = ["Иванов", "Петрова", "Смирнов"]
CHINESE = ["王小明", "李华", "张伟"]

PLAN_GOAL_S = 10.0
PDF_GOAL_S = 90.0
PDF_GOAL_MB = 200.0

#: The CLI as a user runs it, reporting its own peak resident set and its children's when it ends.
_MEASURED = """
import resource, sys
from cli.main import main
try:
    main(sys.argv[1:])
finally:
    status = open('/proc/self/status').read()
    hwm = next(int(line.split()[1]) for line in status.splitlines() if line.startswith('VmHWM:'))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sys.stderr.write(f'PEAK {hwm} {children}\\n')
"""


def people(n: int, seed: int) -> list[tuple[int, dict[str, object], str]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        kind = rng.random()
        fields: dict[str, str] = {"ticket_type": rng.choice(["Visitor", "Speaker", "Exhibitor"])}
        if kind < 0.8:
            given, family = rng.choice(GIVEN), f"{rng.choice(LATIN)}{i % 97 or ''}"
            name = f"{given} {family}"
            if i % 2:
                fields |= {"given_name": given, "family_name": family}
        elif kind < 0.88:
            name = f"Δήμητρα {rng.choice(GREEK)}"
        elif kind < 0.95:
            name = f"Ольга {rng.choice(CYRILLIC)}"
        else:
            name = rng.choice(CHINESE) + str(i % 10)
        rows.append((i + 2, {"attendee_id": f"code-{seed}-{i:06d}", "name": name, "fields": fields}, ""))
    return rows


async def _load(redis: Redis, venue: str, n: int, seed: int) -> AttendeeStore:
    attendees = AttendeeStore(redis, venue)
    batch = people(n, seed)
    for i in range(0, n, 5000):
        await Importer(attendees).load(iter(batch[i : i + 5000]))
    return attendees


async def run(plan_size: int, pdf_size: int, dpi: int) -> dict[str, Any]:
    with redis_server() as server:
        redis = Redis.from_url(server.url)
        try:
            attendees = await _load(redis, "bench-plan", plan_size, 1)
            store = PreprintStore(redis, "bench-plan", attendees)
            t0 = time.perf_counter()
            report = await store.plan("night", box_size=200)
            plan_s = time.perf_counter() - t0
            await _load(redis, "bench-pdf", pdf_size, 2)
            await PreprintStore(redis, "bench-pdf").plan("night", box_size=200)
        finally:
            await redis.aclose()
        with tempfile.TemporaryDirectory(prefix="badge-bench-pdf-") as tmp:
            out = Path(tmp) / "badges.pdf"
            args = [
                "preprint", "pdf", "night", "-o", str(out), "--redis", server.url, "--venue", "bench-pdf",
                "--dpi", str(dpi), "--json",
            ]  # fmt: skip
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", _MEASURED, *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                check=False,
            )  # fmt: skip
            pdf_s = time.perf_counter() - t0
            size = out.stat().st_size if out.exists() else 0
    if done.returncode != 0:
        raise SystemExit(f"preprint pdf failed: {done.stderr[-2000:]}")
    peak = next(line for line in done.stderr.splitlines() if line.startswith("PEAK "))
    main_kb, child_kb = (int(x) for x in peak.split()[1:])
    workers = min(os.cpu_count() or 1, 4)
    total_mb = (main_kb + child_kb * workers) / 1024
    return {
        "plan": {"attendees": plan_size, "seconds": plan_s, "boxes": report.run.boxes, "goal_s": PLAN_GOAL_S},
        "pdf": {
            "badges": pdf_size, "dpi": dpi, "seconds": pdf_s, "bytes": size, "main_mb": main_kb / 1024,
            "worker_mb": child_kb / 1024, "workers": workers, "total_mb": total_mb, "goal_s": PDF_GOAL_S,
            "goal_mb": PDF_GOAL_MB,
        },
    }  # fmt: skip


def report(res: dict[str, Any]) -> str:
    plan, pdf = res["plan"], res["pdf"]
    rows = [
        [f"plan {plan['attendees']:,} attendees ({plan['boxes']} boxes)", f"{fmt(plan['seconds'])} s",
         f"<= {plan['goal_s']:g} s", verdict(plan["seconds"] <= plan["goal_s"])],
        [f"PDF of {pdf['badges']:,} 4x6 in badges at {pdf['dpi']} dpi ({pdf['bytes'] / 1e6:.0f} MB)",
         f"{fmt(pdf['seconds'])} s", f"<= {pdf['goal_s']:g} s", verdict(pdf["seconds"] <= pdf["goal_s"])],
        [f"PDF peak memory: command {pdf['main_mb']:.0f} MB + {pdf['workers']} x worker {pdf['worker_mb']:.0f} MB",
         f"{pdf['total_mb']:.0f} MB", f"<= {pdf['goal_mb']:g} MB", verdict(pdf["total_mb"] <= pdf["goal_mb"])],
    ]  # fmt: skip
    return table("Pre-printed badges", "lower is better", ["step", "took", "goal", ""], rows)


def main() -> None:
    bench_main(
        "preprint",
        __doc__,
        run,
        report,
        [
            ("--plan-size", 50000, "attendees planned"),
            ("--pdf-size", 5000, "badges in the PDF"),
            ("--dpi", 300, "the PDF's resolution"),
        ],
    )


if __name__ == "__main__":
    main()
