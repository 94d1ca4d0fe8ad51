"""Badge layouts: what drawing a layout badge costs next to the built-in design, whether drawing ahead still hides
it from the printer, and what an agent holding three layouts and their images weighs.

Run: .venv/bin/python -m bench.layouts [--badges N] [--repeats R]
Prints tables and writes bench/results/layouts.json.

The layout is the worked example of docs/layouts.md (config/layouts/speaker-*.yaml: an SVG logo, the name, company
and pronouns, a black band with the ticket type in white, a QR code), one variant per printer's stock. Drawing is
timed through each language's real driver (``driver.render``: drawing and encoding, as the agent calls it), built-in
and layout in the same process, one after the other; the ``sim`` row is the simulated printer's render (no drawing).
Duty cycle: bench/duty.py's measurement (one real agent over TCP, the emulator printing 0.5 s a label, every job
queued first) with the layout set in the venue. Memory: ``badge-agent run`` processes (as the systemd unit runs them)
on a ZPL emulator after printing a mix of ticket types: one with no layout, one with three layouts (an SVG logo, a
PNG logo, a PDF background) chosen by ``ticket_type`` rules.
"""

from __future__ import annotations

import asyncio
import compileall
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw
from redis.asyncio import Redis

from bench.common import ROOT, bench_main, fmt, log_to_file, percentile, redis_server, table, verdict
from bench.duty import duty_agent
from bench.footprint import rss_mb, spawn, unit_environment
from bench.printers import emulator, real_driver
from drivers.base import Badge
from drivers.sim import SimDriver
from layouts.draw import LayoutDraw
from layouts.files import load_layout
from layouts.model import Layout
from layouts.store import LayoutStore
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import agent_config
from tests.support.drivers import LABELS

EXAMPLES = ROOT / "config" / "layouts"
VARIANT = {"zpl": "speaker-4x6.yaml", "brother_ql": "speaker-62mm.yaml", "escpos": "speaker-72mm.yaml"}
#: The languages the example layouts have a variant for.
LANGS = tuple(VARIANT)
ZEBRA_300 = LABELS["zpl"].__class__(width_mm=101.6, height_mm=152.4, dpi=300)


def speaker(i: int) -> Badge:
    return Badge(
        job_id=f"L-{i}",
        attendee_id=f"L-{i}",
        name=f"Amélie Dubois-{i}",
        company=f"Éditions Lumière {i}",  # varies, as companies do: only the band and pronouns recur
        fields={"ticket_type": "Speaker", "pronouns": "she/her"},
    )


def draw_times(repeats: int) -> dict[str, Any]:
    """p50 ms of driver.render, built-in and layout, per language (and ZPL at 300 dpi)."""
    rows: dict[str, Any] = {}
    cases = [(kind, kind, LABELS[kind]) for kind in LANGS] + [("zpl 300 dpi", "zpl", ZEBRA_300)]
    for row, kind, label in cases:
        driver = real_driver(kind, 9, "p")  # never opened: render needs no link
        driver.label = label  # type: ignore[attr-defined]
        layout = load_layout(EXAMPLES / VARIANT[kind])
        took: dict[str, list[float]] = {"built-in": [], "layout": []}
        ways = (("built-in", None), ("layout", LayoutDraw(layout)))  # the layout prepared once, as an agent holds it
        for _, draw in ways:
            driver.draw = draw
            driver.render(speaker(0))  # warm: fonts found, images rasterised once per label
        for i in range(repeats):  # alternated, so both see the same machine load
            for name, draw in ways:
                driver.draw = draw
                t0 = time.perf_counter()
                driver.render(speaker(i))
                took[name].append((time.perf_counter() - t0) * 1000)
        built, ours = percentile(took["built-in"], 50), percentile(took["layout"], 50)
        rows[row] = {"builtin_p50_ms": built, "layout_p50_ms": ours, "ratio": ours / built}
    sim = SimDriver("p", 0.0)
    sim_took = []
    for i in range(repeats):
        t0 = time.perf_counter()
        sim.render(speaker(i))
        sim_took.append((time.perf_counter() - t0) * 1000)
    rows["sim (no drawing)"] = {"builtin_p50_ms": percentile(sim_took, 50), "layout_p50_ms": None, "ratio": None}
    return rows


def _mark(path: Path, size: tuple[int, int], pdf: bool = False) -> Path:
    """A logo PNG, or a one-page PDF background with a frame (what an event's designer hands over)."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0] - 1, size[1] - 1), outline=0, width=max(4, size[0] // 100))
    draw.ellipse((size[0] // 4, size[1] // 4, size[0] * 3 // 4, size[1] * 3 // 4), outline=0, width=8)
    if pdf:
        image.save(path, "PDF", resolution=254)
    else:
        image.save(path)
    return path


def three_layouts(folder: Path) -> dict[str, Layout]:
    """speaker (SVG logo), staff (a PDF background), attendee (a PNG logo): 4x6 in."""
    import shutil

    import yaml

    shutil.copy(EXAMPLES / "logo.svg", folder / "logo.svg")
    _mark(folder / "logo.png", (1200, 400))
    _mark(folder / "frame.pdf", (1016, 1524), pdf=True)
    base = yaml.safe_load((EXAMPLES / VARIANT["zpl"]).read_text())
    staff = {**base, "name": "staff", "background": "frame.pdf"}
    attendee = {**base, "name": "attendee"}
    attendee["elements"] = [dict(e, src="logo.png") if e["type"] == "image" else e for e in base["elements"]]
    out = {}
    for name, doc in (("speaker", base), ("staff", staff), ("attendee", attendee)):
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(doc))
        out[name] = load_layout(folder / f"{name}.yaml")
    return out


async def agent_rss(server: Any, tmp: Path, with_layouts: bool, badges: int) -> dict[str, float]:
    venue = "rss-layouts" if with_layouts else "rss-builtin"
    folder = tmp / venue
    folder.mkdir()
    redis = Redis.from_url(server.url)
    store = Store(redis, venue)
    if with_layouts:
        layouts = LayoutStore(redis, venue)
        made = three_layouts(folder)
        for name, layout in made.items():
            await layouts.set(name, [layout], by="bench")
        await layouts.set_rule("ticket_type=Speaker", "speaker", "bench")
        await layouts.set_rule("ticket_type=Staff", "staff", "bench")
        await layouts.set("default", [made["attendee"]], by="bench")
    kinds = ("Speaker", "Staff", "Attendee")
    with emulator("zpl", 0.02, folder / "prints.jsonl") as port:
        driver = {"language": "zpl", "transport": "tcp", "host": "127.0.0.1", "port": port}
        config = agent_config(folder / "p.yaml", venue, server.url, "p", 0.0, http="off", driver=driver)
        proc = spawn(config, {"PYTHONUNBUFFERED": "1", **unit_environment()})
        try:
            for i in range(badges):
                job = parse_job(
                    {"attendee_id": f"M-{i}", "name": f"Attendee {i} Müller", "fields": {"ticket_type": kinds[i % 3]}}
                )
                await store.enqueue(job.job_id, job.payload(), None)
            async with asyncio.timeout(badges * 0.5 + 60):
                while int(await redis.hget(Keys(venue).stats, "printed") or 0) < badges:
                    await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)
            return rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(15)
            await redis.aclose()


async def main_async(badges: int, repeats: int) -> dict[str, Any]:
    compileall.compile_dir(ROOT / "layouts", quiet=1)
    out: dict[str, Any] = {"draw": draw_times(repeats)}
    with tempfile.TemporaryDirectory(prefix="badge-bench-layouts-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        log_to_file(tmp / "bench.log")
        duty: dict[str, Any] = {}
        redis = Redis.from_url(server.url)
        for kind in LANGS:
            venue = f"duty-{kind}-0.5".replace("_", "-").replace(".", "-")  # the venue bench.duty's agent uses
            await LayoutStore(redis, venue).set("default", [load_layout(EXAMPLES / VARIANT[kind])], by="bench")
            duty[kind] = await duty_agent(server, tmp, kind, 0.5, badges)
        await redis.aclose()
        out["duty"] = duty
        out["rss"] = {
            "built-in design": await agent_rss(server, tmp, False, 60),
            "three layouts + images": await agent_rss(server, tmp, True, 60),
        }
    out["targets"] = {
        "draw_ratio_300dpi_le_1.3": out["draw"]["zpl 300 dpi"]["ratio"] <= 1.3,
        "duty_ge_0.99": all(d["duty"] >= 0.99 for d in duty.values()),
        "rss_le_60mb": out["rss"]["three layouts + images"]["VmHWM"] <= 60,
    }
    return out


def report(res: dict[str, Any]) -> str:
    parts = []
    rows = [
        [k, fmt(d["builtin_p50_ms"]), fmt(d["layout_p50_ms"]) if d["layout_p50_ms"] is not None else "-",
         fmt(d["ratio"]) if d["ratio"] is not None else "-"]
        for k, d in res["draw"].items()
    ]  # fmt: skip
    parts.append(
        table(
            "Drawing one badge through the real driver (draw + encode), p50 ms: built-in design vs the example layout",
            "lower is better; ratio = layout / built-in (target <= 1.3 at 300 dpi)",
            ["printer", "built-in", "layout", "ratio"],
            rows,
        )
    )
    rows = [
        [k, fmt(d["duty"], 4), fmt(d["gap_p50_ms"]), fmt(d["gap_max_ms"]), d["labels"]] for k, d in res["duty"].items()
    ]
    parts.append(
        table(
            "Duty cycle with the layout, one agent, real driver over TCP, 0.5 s a label",
            "higher duty is better (target >= 0.99); gap = printer idle between labels",
            ["printer", "duty", "gap p50 ms", "gap max ms", "labels"],
            rows,
        )
    )
    rows = [[k, fmt(d["VmRSS"], 1), fmt(d["VmHWM"], 1)] for k, d in res["rss"].items()]
    parts.append(
        table(
            "Memory of a printing agent (badge-agent run, ZPL over TCP, 60 badges of three ticket types), MB",
            "lower is better (target: peak <= 60 MB with three layouts)",
            ["agent", "RSS", "peak (VmHWM)"],
            rows,
        )
    )
    parts.append("targets: " + ", ".join(f"{k} {verdict(v)}" for k, v in res["targets"].items()))
    return "\n\n".join(parts)


if __name__ == "__main__":
    bench_main(
        "layouts",
        __doc__,
        main_async,
        report,
        [("--badges", 40, "badges in each duty-cycle run"), ("--repeats", 30, "drawings timed per printer")],
    )
