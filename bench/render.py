"""How long drawing one badge takes, per label size and script (the agent renders in a worker thread).

Run: .venv/bin/python bench/render.py      Prints a table; lower is better.
"""

from __future__ import annotations

import statistics
import time

from drivers.base import Badge
from drivers.label import LabelConfig
from drivers.render import render_badge
from drivers.render.brother import encode_brother_raster
from drivers.render.escpos import encode_escpos_raster
from drivers.render.zpl import encode_zpl

NAMES = {
    "latin": "María José García",
    "arabic": "محمد عبد الله",
    "cjk": "山田 太郎",
    "mixed": "María 李 Сергей",
    "long": "Maximilian Alexander Wolfeschlegelsteinhausen-Bergerdorff von Hohenzollern",
}
LABELS = {
    "zebra 4x6 203dpi": LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203),
    "zebra 4x6 300dpi": LabelConfig(width_mm=101.6, height_mm=152.4, dpi=300),
    "brother 62x100": LabelConfig(width_mm=62, height_mm=100, dpi=300),
    "escpos 80mm": LabelConfig(width_mm=72, height_mm=100, dpi=203),
}
REPEATS = 15


def main() -> None:
    started = time.perf_counter()
    render_badge(Badge("w", "W", "warm up 山 م"), LABELS["zebra 4x6 203dpi"])
    first = time.perf_counter() - started
    print(f"first render in this process (fonts found, coverage read): {first * 1000:.0f} ms\n")
    print(f"{'label':<18} {'script':<8} {'min ms':>7} {'median':>7} {'max':>7}   (render, lower is better)")
    for label_name, label in LABELS.items():
        for script, name in NAMES.items():
            badge = Badge("j", "A-1", name, "Universidad de Sevilla", "Speaker")
            times = []
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                render_badge(badge, label)
                times.append((time.perf_counter() - t0) * 1000)
            print(f"{label_name:<18} {script:<8} {min(times):7.1f} {statistics.median(times):7.1f} {max(times):7.1f}")
    image = render_badge(Badge("j", "A-1", NAMES["latin"]), LABELS["zebra 4x6 203dpi"])
    brother_image = render_badge(Badge("j", "A-1", NAMES["latin"]), LABELS["brother 62x100"])
    escpos_image = render_badge(Badge("j", "A-1", NAMES["latin"]), LABELS["escpos 80mm"])
    print()
    for codec, call in (
        ("zpl ^GFA Z64", lambda: encode_zpl(image)),
        ("brother raster", lambda: encode_brother_raster(brother_image)),
        ("escpos GS v 0", lambda: encode_escpos_raster(escpos_image)),
    ):
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            call()
            times.append((time.perf_counter() - t0) * 1000)
        print(f"encode {codec:<16} median {statistics.median(times):6.1f} ms")


if __name__ == "__main__":
    main()
