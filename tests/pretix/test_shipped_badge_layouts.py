"""pretix's own badge templates, read from the installed pretix package (nothing of pretix is copied here), are
accepted as they are and draw every badge: the name on each, both halves of the butterfly, the A6 one over the
background PDF pretix ships with it."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import ImageOps

from drivers.base import Badge
from drivers.label import LabelConfig
from layouts.draw import draw_layout
from layouts.pretix import load_pretix
from tests.pretix.install import PretixInstall

_DUMP = """
import json, pathlib
import pretix.plugins.badges.templates as templates
folder = pathlib.Path(templates.__file__).parent / "static" / "pretixplugins" / "badges"
print(json.dumps({
    "templates": {k: {"pagesize": list(v["pagesize"]), "layout": v["layout"]} for k, v in templates.TEMPLATES.items()},
    "backgrounds": {p.stem.removeprefix("badge_default_"): str(p) for p in folder.glob("badge_default_*.pdf")},
}))
"""
_MM_PER_POINT = 25.4 / 72
BADGE = Badge(job_id="j-1", attendee_id="SECRET123", name="Renée Laurent", company="Analytical Engines")


@pytest.fixture(scope="module")
def shipped(pretix_install: PretixInstall) -> dict[str, Any]:
    run = subprocess.run([str(pretix_install.python), "-c", _DUMP], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    found: dict[str, Any] = json.loads(run.stdout)
    assert len(found["templates"]) >= 10 and "82x203butterfly" in found["templates"]
    return found


def test_every_shipped_template_draws_the_name(shipped: dict[str, Any], tmp_path: Path) -> None:
    for key, template in shipped["templates"].items():
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps(template["layout"]))
        width, height = (points * _MM_PER_POINT for points in template["pagesize"])
        layout = load_pretix(path, size_mm=(width, height))
        label = LabelConfig(width_mm=max(width, 10.5), height_mm=max(height, 10.5), dpi=300)
        drawn = draw_layout(layout, BADGE, label)
        assert ImageOps.invert(drawn.image.convert("L")).getbbox() is not None, key
        assert any(p.holds_name for p in layout.elements), key


def test_the_shipped_butterfly_has_its_back_half_upside_down(shipped: dict[str, Any], tmp_path: Path) -> None:
    template = shipped["templates"]["82x203butterfly"]
    path = tmp_path / "butterfly.json"
    path.write_text(json.dumps(template["layout"]))
    layout = load_pretix(path, size_mm=(82, 203))
    names = [p.element for p in layout.elements if p.holds_name]
    assert sorted(e.rotate for e in names) == [0, 180]
    front, back = sorted(names, key=lambda e: e.y)
    assert front.y < 101.5 < back.y  # one on each half of the fold
    image = draw_layout(layout, replace(BADGE, company=""), LabelConfig(width_mm=82, height_mm=203, dpi=203))
    gray = ImageOps.invert(image.image.convert("L"))
    d = 203 / 25.4
    top = gray.crop((0, round(front.y * d), gray.width, round((front.y + front.h) * d)))
    bottom = gray.crop((0, round(back.y * d), gray.width, round((back.y + back.h) * d)))
    assert abs(top.histogram()[255] - bottom.histogram()[255]) <= 0.05 * top.histogram()[255]


def test_the_a6_template_over_its_shipped_background(shipped: dict[str, Any], tmp_path: Path) -> None:
    background = Path(shipped["backgrounds"]["a6l"])
    path = tmp_path / "a6l.json"
    path.write_text(json.dumps(shipped["templates"]["a6l"]["layout"]))
    layout = load_pretix(path, background=background)  # the page size from pretix's own PDF
    assert (round(layout.size.width_mm), round(layout.size.height_mm)) == (148, 105)
    drawn = draw_layout(layout, BADGE, LabelConfig(width_mm=148, height_mm=105, dpi=203))
    assert drawn.image.size == (1176, 832)  # 148 x 105 mm at 203 dpi, whole bytes of dots
    assert ImageOps.invert(drawn.image.convert("L")).getbbox() is not None
