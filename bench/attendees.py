"""The attendee list at venue scale: import, lookup and search through the real intake, memory, and how cost grows.

Run: .venv/bin/python -m bench.attendees [--sizes 5000,50000,200000] [--seconds S] [--clients N] [--samples K]
     [--client-processes P]
Prints a table and writes bench/results/attendees.json.

For each size, on a private redis-server of its own (no AOF: the list's own cost, not the disk's):
1. Import: a pretix-style export (UTF-8 CSV; names in Latin with accents, Greek, Cyrillic and Chinese; company,
   order code, e-mail, a 32-character ticket secret) loaded by ``badge-agent attendees import --preset pretix`` as
   a user runs it (process start included).
2. Memory: Redis's ``used_memory`` after the import less before, per attendee (records, search index, counts).
3. Lookup and search: ``badge-agent intake`` as its own process; N concurrent clients (keep-alive connections of a
   bare HTTP/1.1 client, spread over P processes: bench/common.py ``http_load``) for S seconds each:
   ``GET /v1/attendees/{code}`` of 2,000 random listed codes (they repeat, as a kiosk's once-a-second look at the
   badge of the code it scanned does), then ``GET /v1/attendees?q=`` of a random name's first 3 letters plus the
   next word's first 2 (or a Chinese name's first character). First back to back (what the intake can take; the
   CPU time a request of the intake, ``CPU ms``, of redis-server and of the clients too), then paced (``PACES``:
   each client on a fixed schedule, latency from the moment a request was due), where the goals are judged.
4. Scan -> first byte (once, at the middle size): one agent (its own process) on an idle ZPL emulator served here;
   a kiosk token POSTs ``/v1/attendees/{code}/badge``; the clock stops when the emulator receives the badge's first
   byte. Between samples the badge prints and the bench waits 50-150 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import functools
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import yaml
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from bench.common import ROOT, fmt, http_load, percentile, redis_server, table, verdict, write_results
from bench.intake import intake_process
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import TcpFront
from protocol.keys import Keys

LATIN_FIRST = [
    "Renée", "José", "Zoë", "François", "Łukasz", "Ana", "Jürgen", "Siobhán", "Ömer", "Chloé", "Mateo", "Maria",
    "Anna", "Peter", "Sofía", "Lars", "Inês", "Björn", "Agnieszka", "Giulia", "Mehmet", "Noémie", "Oskar", "Aoife",
]  # fmt: skip
#: Surnames made of syllables: thousands of distinct ones, as a real list has (the index's cost is per distinct word).
SYLLABLES = [
    "le", "fè", "vre", "nú", "ñez", "gé", "rard", "dvo", "řák", "mül", "ler", "ko", "wal", "ski", "ber",
    "tin", "ro", "sa", "mi", "chel", "van", "der", "berg", "ağa", "oğ", "lu", "ngu", "yễn", "ma", "ta",
]  # fmt: skip
GREEK = ["Δημήτρης Παπαδόπουλος", "Ελένη Γεωργίου", "Νίκος Κωνσταντίνου", "Μαρία Ιωάννου"]
CYRILLIC = ["Александр Пушкин", "Мария Иванова", "Дмитрий Смирнов", "Ольга Кузнецова"]
CHINESE = ["李小龍", "王芳", "張偉", "陳靜", "劉洋", "楊敏"]
COMPANIES = ["Café Müller", "ACME", "Škoda Café", "Golden Harvest", "Ελληνικά ΑΕ", "Northwind", "Initech", ""]
#: Most attendees' companies are their own: a few big ones (above) and a long tail.
TAIL = ["Labs", "GmbH", "Studio", "SARL", "Ltd", "Group", "Systems"]
HEADER = ["Order code", "Position ID", "Status", "Email", "Product", "Attendee name", "Company", "Ticket secret"]
PRODUCTS = ["Visitor", "Visitor", "Visitor", "Exhibitor", "Speaker", "Press"]


def person(rng: random.Random, i: int) -> list[str]:
    kind = rng.random()
    if kind < 0.7:
        last = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        name = f"{rng.choice(LATIN_FIRST)} {last}"
    elif kind < 0.8:
        name = rng.choice(GREEK)
    elif kind < 0.9:
        name = rng.choice(CYRILLIC)
    else:
        name = rng.choice(CHINESE)
    order = f"{i // 2:05X}"[-5:].rjust(5, "A")
    secret = f"{rng.getrandbits(128):032x}"
    email = f"guest{i}@example.org"
    company = (
        rng.choice(COMPANIES)
        if rng.random() < 0.5
        else f"{rng.choice(SYLLABLES).capitalize()}{i % 3000} {rng.choice(TAIL)}"
    )
    return [order, str(i % 2 + 1), "paid", email, rng.choice(PRODUCTS), name, company, secret]


def export(path: Path, size: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)
    people = [person(rng, i) for i in range(size)]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        writer.writerows(people)
    return people


async def used_memory(redis: Redis) -> int:
    return int((await redis.info("memory"))["used_memory"])


def import_list(path: Path, url: str, venue: str) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "agent", "attendees", "import", str(path), "--preset", "pretix"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "BADGE_REDIS_URL": url, "BADGE_VENUE": venue},
        check=False,
    )
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        raise RuntimeError(f"import failed: {out.stdout[-500:]} {out.stderr[-2000:]}")
    return elapsed, out.stdout.strip().splitlines()[-1]


#: Each client's interval between lookups and between searches (s), at a pace a venue works at and at a pace well
#: beyond any venue's: 20 kiosks scanning an attendee every few seconds and following the badge once a second ask
#: some 40 lookups a second; 20 desks typing without a pause some 100 searches (a search a keystroke, debounced).
#: Latency at a pace is the goal's measure: back to back, 20 clients each waiting for its answer before asking again
#: measure what the intake can take, and their latency is 20 / that rate (Little's law), whatever a request costs.
PACES = {"working": (0.2, 0.5), "busy": (0.04, 0.2)}
#: The pace the goals are judged at (at 50,000 attendees).
GOAL_PACE = "busy"

#: What a search that found no one answers (counted: a search bench that finds nothing measures nothing).
NOTHING = b'{"attendees":[]}'


def search_query(rng: random.Random, name: str) -> str:
    words = name.split()
    if len(words) == 1:  # a Chinese name: its first character
        return words[0][0]
    return f"{words[0][:3]} {words[1][:2]}"


async def one_size(tmp: Path, size: int, seconds: float, clients: int, processes: int) -> dict[str, Any]:
    venue = f"bench-att-{size}"
    folder = tmp / venue
    folder.mkdir()
    people = export(folder / "export.csv", size)
    with redis_server() as server:
        redis = Redis.from_url(server.url)
        try:
            before = await used_memory(redis)
            import_s, summary = import_list(folder / "export.csv", server.url, venue)
            after = await used_memory(redis)
            terms = await redis.zcard(f"{Keys(venue).prefix}attendees:terms")
        finally:
            await redis.aclose()
        limits = {"rate": 1e5, "burst": 100_000, "lookup_rate": 1e4, "lookup_burst": 10_000}
        proc, base, secret = intake_process(folder, venue, server.url, role="desk", limits=limits)
        try:
            rng = random.Random(3)
            codes = [("GET", f"/v1/attendees/{p[7]}", None) for p in rng.sample(people, min(2000, size))]
            queries = [
                ("GET", "/v1/attendees?q=" + quote(search_query(rng, p[5])), None)
                for p in rng.sample(people, min(2000, size))
            ]
            redis = Redis.from_url(server.url)
            load = functools.partial(http_load, base, secret, clients=clients, processes=processes, empty=NOTHING)
            try:
                await load(codes, seconds=1.0)  # warm up: connections, script cache
                lookup = await load(codes, seconds=seconds, pid=proc.pid, redis=redis)
                search = await load(queries, seconds=seconds, pid=proc.pid, redis=redis)
                paced = {
                    pace: {
                        "lookup": await load(codes, seconds=seconds, interval=lookup_every),
                        "search": await load(queries, seconds=seconds, interval=search_every),
                    }
                    for pace, (lookup_every, search_every) in PACES.items()
                }
            finally:
                await redis.aclose()
        finally:
            proc.terminate()
            proc.wait(10)
    return {
        "size": size,
        "import_s": import_s,
        "import_rows_per_s": size / import_s,
        "import_summary": summary,
        "bytes_per_attendee": (after - before) / size,
        "distinct_terms_per_attendee": terms / size,
        "lookup": lookup,
        "search": search,
        "paced": paced,
    }


async def scan_to_first_byte(tmp: Path, samples: int) -> dict[str, Any]:
    """POST /v1/attendees/{code}/badge -> the badge's first byte at an idle ZPL emulator (agent in its own process)."""
    venue = "bench-att-scan"
    folder = tmp / venue
    folder.mkdir()
    people = export(folder / "export.csv", max(samples * 2, 100), seed=9)
    printer = EMULATORS["zpl"]("hall-a-1", print_time=0.05)
    arrivals: list[float] = []
    receive = printer.receive

    def watched(data: bytes, reply: Any) -> None:
        arrivals.append(time.perf_counter())
        receive(data, reply)

    printer.receive = watched  # type: ignore[method-assign]
    await printer.start()
    front = TcpFront(printer, "127.0.0.1", 0)
    host, port = await front.start()
    latencies: list[float] = []
    with redis_server() as server:
        import_list(folder / "export.csv", server.url, venue)
        config = folder / "hall-a-1.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "venue": venue,
                    "printer": {
                        "name": "hall-a-1",
                        "location": "Hall A, desk 1",
                        "driver": {"language": "zpl", "transport": "tcp", "host": host, "port": port},
                    },
                    "redis": {"url": server.url},
                    "http": {"listen": "off"},
                    "journal": str(folder / "hall-a-1.journal"),
                }
            )
        )
        proc, base, secret = intake_process(folder, venue, server.url)
        with (folder / "agent.log").open("ab") as log:
            agent = subprocess.Popen([sys.executable, "-m", "agent", "run", "-c", str(config)], cwd=ROOT, stderr=log)
        redis = Redis.from_url(server.url)
        try:
            async with asyncio.timeout(30):
                while await redis.zcard(Keys(venue).hb) < 1:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.5)
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {secret}"}) as session:
                for person_row in people[:samples]:
                    code = person_row[7]
                    await asyncio.sleep(0.3)  # the printer's status probes and the last badge's tail are over
                    arrivals.clear()
                    t0 = time.perf_counter()
                    async with session.post(f"{base}/v1/attendees/{code}/badge") as resp:
                        body = await resp.json()
                    # A kiosk's answer names the badge by badge_id, not its job id: the job id is in the list.
                    listed = await AttendeeStore(redis, venue).get(code)
                    assert body["badge"]["state"] != "none" and listed is not None
                    job_id = listed.job_id
                    async with asyncio.timeout(10):
                        while not [t for t in arrivals if t > t0]:
                            await asyncio.sleep(0.001)
                    latencies.append((min(t for t in arrivals if t > t0) - t0) * 1000)
                    async with asyncio.timeout(10):
                        while await redis.hget(Keys(venue).job(job_id), "state") != b"printed":
                            await asyncio.sleep(0.01)
                    await asyncio.sleep(random.uniform(0.05, 0.15))
        finally:
            agent.terminate()
            proc.terminate()
            agent.wait(30)
            proc.wait(10)
            await redis.aclose()
            await front.stop()
            await printer.stop()
    return {"samples": len(latencies), "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99)}


async def main_async(
    sizes: list[int], seconds: float, clients: int, samples: int, processes: int = 2
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="badge-bench-attendees-") as tmpdir:
        tmp = Path(tmpdir)
        results = [await one_size(tmp, size, seconds, clients, processes) for size in sizes]
        scan = await scan_to_first_byte(tmp, samples)
    return {
        "clients": clients,
        "client_processes": processes,
        "seconds": seconds,
        "load_average": os.getloadavg(),
        "sizes": results,
        "scan": scan,
    }


def report(out: dict[str, Any]) -> str:
    rows = []
    for r in out["sizes"]:
        row = [
            f"{r['size']:,}",
            fmt(r["import_s"], 1),
            f"{r['import_rows_per_s']:,.0f}",
            f"{r['bytes_per_attendee']:.0f}",
            fmt(r["distinct_terms_per_attendee"], 2),
        ]
        for what in ("lookup", "search"):
            m = r[what]
            row += [
                fmt(m["p50_ms"]),
                fmt(m["p99_ms"]),
                f"{m['per_s']:,.0f}",
                fmt(m["cpu_ms_per_request"]),
                fmt(m["redis_cpu_ms"]),
                fmt(m["client_cpu_ms"]),
            ]
        rows.append(row)
    paced = [
        [f"{r['size']:,}", f"{pace}: every {PACES[pace][0]:g} s / {PACES[pace][1]:g} s"]
        + [
            cell
            for what in ("lookup", "search")
            for cell in (
                fmt(r["paced"][pace][what]["p50_ms"]),
                fmt(r["paced"][pace][what]["p99_ms"]),
                f"{r['paced'][pace][what]['per_s']:,.0f}",
            )
        ]
        for r in out["sizes"]
        for pace in PACES
    ]
    mid = next((r for r in out["sizes"] if r["size"] == 50_000), out["sizes"][-1])
    s = out["scan"]
    busy = mid["paced"][GOAL_PACE]
    every = dict(zip(("lookup", "search"), PACES[GOAL_PACE], strict=True))
    clients = out["clients"]
    limits = {"lookup": 10, "search": 50}

    def latency_goal(what: str, m: dict[str, Any], how: str) -> list[str]:
        return [f"{what} p99 <= {limits[what]} ms, {clients} clients {how}", fmt(m["p99_ms"]) + " ms",
                verdict(m["p99_ms"] <= limits[what])]  # fmt: skip

    goals = [
        ["import 50,000 rows <= 10 s", fmt(mid["import_s"], 1) + " s", verdict(mid["import_s"] <= 10)],
        *(latency_goal(w, busy[w], f"at {clients / every[w]:,.0f}/s") for w in limits),
        *(latency_goal(w, mid[w], f"back to back ({mid[w]['per_s']:,.0f}/s)") for w in limits),
        ["Redis <= 1 KB an attendee", f"{mid['bytes_per_attendee']:.0f} B", verdict(mid["bytes_per_attendee"] <= 1024)],
        ["scan -> first byte p50 <= 25 ms", fmt(s["p50_ms"]) + " ms", verdict(s["p50_ms"] <= 25)],
    ]
    return "\n\n".join(
        [
            table(
                f"attendee list by size; lookups and searches from {out['clients']} concurrent clients back to back "
                f"({out['client_processes']} processes), {out['seconds']:g} s each, through badge-agent intake; CPU ms "
                "a request of the intake, redis-server and the clients; load average "
                + " / ".join(f"{x:.1f}" for x in out["load_average"]),
                "lower s, bytes and ms are better",
                [
                    "attendees",
                    "import s",
                    "rows/s",
                    "B/attendee",
                    "terms/att",
                    "lookup p50",
                    "p99",
                    "/s",
                    "CPU ms",
                    "Redis",
                    "client",
                    "search p50",
                    "p99",
                    "/s",
                    "CPU ms",
                    "Redis",
                    "client",
                ],
                rows,
            ),
            table(
                f"paced: {out['clients']} clients, each a lookup / a search on a fixed schedule (latency from the"
                " moment a request was due)",
                "lower ms is better",
                ["attendees", "pace (lookup / search)", "lookup p50", "p99", "/s", "search p50", "p99", "/s"],
                paced,
            ),
            table(
                f"scan -> first byte at an idle ZPL printer ({s['samples']} scans, kiosk token)",
                "lower is better",
                ["", "p50 ms", "p99 ms"],
                [["POST /v1/attendees/{code}/badge", fmt(s["p50_ms"]), fmt(s["p99_ms"])]],
            ),
            table("goals (at 50,000 attendees)", "", ["goal", "measured", ""], goals),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="5000,50000,200000")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients are spread over")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    out = asyncio.run(main_async(sizes, args.seconds, args.clients, args.samples, args.client_processes))
    print(report(out))
    print(f"\nwritten: {write_results('attendees', out)}")


if __name__ == "__main__":
    main()
