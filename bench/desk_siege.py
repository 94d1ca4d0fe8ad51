"""One kiosk token floods the intake with requests and holds half-sent ones open (slowloris): a desk's p99.

Run: .venv/bin/python -m bench.desk_siege [--seconds S] [--flooders N] [--half-sent M]
Prints one table and writes bench/results/desk_siege.json.

``badge-agent intake`` runs as its own process on a private redis-server (loopback), as in bench/kiosk_flood.py,
whose desk it reuses: a desk token creates a job and reads it back, a check-in every 50 ms, for S seconds, every
request's latency kept. Meanwhile one kiosk token's script (tests/intake/test_desk_under_siege.py does the same with
fewer) runs, each run with a fresh intake process:

* **desk alone**: the reference;
* **request flood**: N clients POST jobs back to back, never waiting as Retry-After asks (refused at the token's
  cap and rate);
* **slowloris**: M connections send part of their headers and nothing more, each opened again when the intake
  closes it (``header_timeout``, ``max_connections``);
* **both at once**.

Reported per run: the desk's requests, p50/p99 and errors (any answer but 200/201), the kiosk's answers by status,
the intake's peak RSS. Target: desk p99 < 50 ms and no desk error in every run.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

from bench.common import ROOT, fmt, redis_server, table, verdict, write_results
from bench.kiosk_flood import desk_loop, memory, start_intake
from tests.support.siege import half_sent


async def flooder(session: aiohttp.ClientSession, base: str, secret: str, answers: Counter[int]) -> None:
    headers = {"Authorization": f"Bearer {secret}"}
    n = 0
    while True:
        n += 1
        try:
            job = {"attendee_id": f"K-{id(answers)}-{n}", "name": "Flood"}
            async with session.post(f"{base}/v1/jobs", json=job, headers=headers) as resp:
                await resp.read()
                answers[resp.status] += 1
        except aiohttp.ClientError:
            answers[0] += 1


async def one_run(folder: Path, url: str, seconds: float, flooders: int, slow: int) -> dict[str, Any]:
    folder.mkdir()
    proc, base, desk, kiosk = start_intake(folder, url, {"header_timeout": 10})
    port = int(base.rsplit(":", 1)[1])
    answers: Counter[int] = Counter()
    opened: Counter[str] = Counter()
    stop = asyncio.Event()
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            await desk_loop(session, base, desk, 1.0)  # warm up: connections, the function library
            tasks = [asyncio.create_task(flooder(session, base, kiosk, answers)) for _ in range(flooders)]
            tasks += [asyncio.create_task(half_sent(port, kiosk, stop, opened)) for _ in range(slow)]
            await asyncio.sleep(2.0 if tasks else 0)  # the siege is on before the desk is measured
            result = await desk_loop(session, base, desk, seconds)
            mem = memory(proc.pid)
            stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        proc.terminate()
        proc.wait(10)
    return {
        "desk": result,
        "kiosk_answers": {str(k): v for k, v in sorted(answers.items())},
        "half_sent_opened": opened["opened"],
        "peak_mb": mem["VmHWM"],
    }


async def main_async(seconds: float, flooders: int, slow: int) -> dict[str, Any]:
    plan = [
        ("desk alone", 0, 0),
        ("request flood", flooders, 0),
        ("slowloris", 0, slow),
        ("request flood and slowloris", flooders, slow),
    ]
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="badge-bench-siege-") as tmpdir, redis_server() as server:
        for i, (name, n_flood, n_slow) in enumerate(plan):
            runs[name] = await one_run(Path(tmpdir) / f"run{i}", server.url, seconds, n_flood, n_slow)
    return {"seconds": seconds, "flooders": flooders, "half_sent": slow, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--flooders", type=int, default=50)
    parser.add_argument("--half-sent", type=int, default=500)
    args = parser.parse_args()
    out = asyncio.run(main_async(args.seconds, args.flooders, args.half_sent))
    rows = []
    for name, r in out["runs"].items():
        d = r["desk"]
        kiosk = ", ".join(f"{k}: {v}" for k, v in r["kiosk_answers"].items()) or "-"
        rows.append(
            [name, d["requests"], fmt(d["p50_ms"]), fmt(d["p99_ms"]), d["errors"], kiosk, r["half_sent_opened"],
             fmt(r["peak_mb"], 1)]
        )  # fmt: skip
    print(
        table(
            f"a desk's requests while one kiosk token floods ({out['flooders']} clients) and holds "
            f"{out['half_sent']} half-sent requests, {out['seconds']:g} s",
            "lower latency is better",
            ["run", "desk requests", "p50 ms", "p99 ms", "errors", "kiosk answers", "half-sent opened", "peak MB"],
            rows,
        )
    )
    held = all(r["desk"]["p99_ms"] < 50 and not r["desk"]["errors"] for r in out["runs"].values())
    print(f"desk p99 < 50 ms and no desk error in every run: {verdict(held)}")
    path = write_results("desk_siege", out)
    print(f"\nwritten: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
