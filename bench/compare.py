"""Two checkouts of badge-agent measured in one run: the same benches, interleaved, and each figure's ratio.

Run: .venv/bin/python -m bench.compare BEFORE_DIR [--before-python PY] [--rounds N] [--benches duty,latency,footprint]

This machine is shared and noisy, so a figure of one run says little next to a figure of another day: a change is
judged by running the same bench on the code before and after it alternately (before, after, before, after, ...),
each in its own checkout and virtualenv (a checkout's benches start its own ``python -m agent`` and its own
console script), and comparing the medians of each side. The "after" side is this checkout with this interpreter;
BEFORE_DIR is another checkout (``git worktree add ../before <commit>``) with its own virtualenv (``--before-python``,
by default BEFORE_DIR/.venv/bin/python), in which ``pip install -e .`` has been run.

Figures: duty cycle at 0.5 s a label for each driver (and the sim row), dispatch p50 (enqueue -> bytes at an idle
printer, real drivers over TCP) and the agents' resident memory (footprint.json), each as before, after and
after / before. Prints a table and writes bench/results/compare.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import ROOT, table, write_results

#: What each bench run costs, kept small: the comparison needs several runs of each side.
BENCH_ARGS: dict[str, list[str]] = {
    "duty": ["--badges", "30", "--samples", "20"],
    "latency": ["--samples", "60", "--repeats", "1"],
    "footprint": ["--agents", "1", "--idle", "15", "--badges", "30"],
    "hot_path": ["--badges", "2000", "--repeats", "3", "--monitor-badges", "50"],
}


def _duty(result: dict[str, Any]) -> dict[str, float]:
    rows = result["duty"]["0.5"].items()
    figures = {f"duty 0.5 s {kind}": row["duty"] for kind, row in rows if row is not None}  # None: a row not run
    figures |= {f"dispatch p50 ms {kind} (duty.py)": row["p50_ms"] for kind, row in result["dispatch"].items()}
    return figures


def _latency(result: dict[str, Any]) -> dict[str, float]:
    systems = result["systems"].items()
    return {f"dispatch p50 ms, fleet of 4: {name}": row["all_p50_ms"] for name, row in systems if name != "saq"}


def _footprint(result: dict[str, Any]) -> dict[str, float]:
    rows = result["configurations"].items()
    return {f"RSS MB: {name}": row["rss_mb"]["median"] for name, row in rows}


def _hot_path(result: dict[str, Any]) -> dict[str, float]:
    return {
        "hot path: agent / bare loop, rate ratio within a repeat": result["ratio_agent_vs_bare"]["median"],
        "hot path: agent / saq, rate ratio within a repeat": result["ratio_agent_vs_saq"]["median"],
    }


FIGURES: dict[str, Callable[[dict[str, Any]], dict[str, float]]] = {
    "hot_path": _hot_path,
    "duty": _duty,
    "latency": _latency,
    "footprint": _footprint,
}


def run_bench(checkout: Path, python: str, name: str) -> dict[str, float]:
    """One run of ``bench.<name>`` in ``checkout`` with ``python``; its figures."""
    started = time.monotonic()
    done = subprocess.run(
        [python, "-m", f"bench.{name}", *BENCH_ARGS[name]],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench.{name} failed in {checkout} (exit {done.returncode}):\n{done.stdout[-2000:]}")
    result = json.loads((checkout / "bench" / "results" / f"{name}.json").read_text(encoding="utf-8"))
    print(f"  {name} in {checkout}: {time.monotonic() - started:.0f} s", flush=True)
    return FIGURES[name](result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the other checkout (the code before the change)")
    parser.add_argument("--before-python", help="its interpreter (default: BEFORE/.venv/bin/python)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side, alternating (default 3)")
    parser.add_argument("--benches", default="duty,latency,footprint")
    parser.add_argument("--duty-badges", type=int, help="badges per duty run (bench.duty --badges)")
    parser.add_argument("--dispatch-samples", type=int, help="dispatch samples per language (bench.duty --samples)")
    args = parser.parse_args()
    if args.duty_badges:
        BENCH_ARGS["duty"][1] = str(args.duty_badges)
    if args.dispatch_samples:
        BENCH_ARGS["duty"][3] = str(args.dispatch_samples)
    before = args.before.resolve()
    before_python = args.before_python or str(before / ".venv" / "bin" / "python")
    sides = {"before": (before, before_python), "after": (ROOT, sys.executable)}
    runs: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    for name in args.benches.split(","):
        if name not in FIGURES:
            raise SystemExit(f"no figures for bench {name!r} (known: {', '.join(FIGURES)})")
        for round_no in range(args.rounds):
            # Alternate which side goes first, so a slow patch of the machine does not always hit the same side.
            order = ("before", "after") if round_no % 2 == 0 else ("after", "before")
            for side in order:
                checkout, python = sides[side]
                for figure, value in run_bench(checkout, python, name).items():
                    runs[side].setdefault(figure, []).append(value)
    rows = []
    out: dict[str, Any] = {"rounds": args.rounds, "before": str(before), "figures": {}}
    for figure in sorted(runs["after"]):
        if figure not in runs["before"]:
            continue
        b, a = statistics.median(runs["before"][figure]), statistics.median(runs["after"][figure])
        ratio = a / b if b else float("nan")
        out["figures"][figure] = {"before": b, "after": a, "ratio": ratio}
        rows.append([figure, f"{b:.4g}", f"{a:.4g}", f"{ratio:.3f}"])
    title = f"Before ({before}) and after ({ROOT}), medians of {args.rounds} interleaved runs each"
    print(table(title, "a ratio near 1: no change", ["figure", "before", "after", "after / before"], rows))
    print(f"\nwritten: {write_results('compare', out)}")


if __name__ == "__main__":
    main()
