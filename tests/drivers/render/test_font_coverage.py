"""Which fonts a badge reads, and what a font's coverage holds.

An agent keeps every face whose cmap it read for the life of the process; reading all ~270 Noto faces of a
Debian machine for the first badge, Latin or not, held ~120 MB. These tests pin the behaviour, not megabytes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from drivers.base import Badge
from drivers.render import fonts, render_badge
from drivers.render.cmap import best_cmap_ranges

from .conftest import ZEBRA_203


@pytest.fixture
def opened_fonts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every font file whose cmap is read while the test runs (the coverage cache starts and ends empty)."""
    opened: list[Path] = []

    def recording(path: Path, index: int = 0) -> list[tuple[int, int]]:
        opened.append(Path(path))
        return best_cmap_ranges(path, index)

    fonts.coverage.cache_clear()
    monkeypatch.setattr(fonts, "best_cmap_ranges", recording)
    yield opened
    fonts.coverage.cache_clear()


def test_a_latin_badge_reads_only_the_fonts_it_needs(opened_fonts: list[Path]) -> None:
    render_badge(Badge("j1", "A-1", "María José García", "Universidad de Sevilla", "Speaker"), ZEBRA_203)
    assert opened_fonts, "no cmap read at all"
    assert {p.name for p in opened_fonts} <= {"NotoSans-Regular.ttf", "NotoSans-Bold.ttf"}


def test_a_name_in_a_later_script_stops_at_the_first_font_that_draws_it(opened_fonts: list[Path]) -> None:
    library = fonts.default_library()
    render_badge(Badge("j1", "A-1", "דוד בן־גוריון", "", ""), ZEBRA_203)
    read = {p.name for p in opened_fonts}
    assert "NotoSansHebrew-Bold.ttf" in read
    # Hebrew comes before the CJK collections in the fallback order: they are never opened for this badge.
    cjk = {face.path.name for key, pair in library.found.items() if key.startswith("CJK") for face in pair}
    assert not read & cjk


def _bundled_and_cjk_faces() -> list[fonts.Face]:
    library = fonts.default_library()
    faces = {fonts.Face(p) for p in sorted(fonts.PACKAGE_FONT_DIR.glob("*.ttf"))}
    faces |= {face for key, pair in library.found.items() if key.startswith("CJK") for face in pair}
    return sorted(faces, key=lambda f: f.name)


@pytest.mark.parametrize("face", _bundled_and_cjk_faces(), ids=lambda f: f.name)
def test_coverage_holds_exactly_the_code_points_of_the_best_cmap(face: fonts.Face) -> None:
    with TTFont(face.path, fontNumber=face.index, lazy=True) as font:
        expected = set(font.getBestCmap() or {})
    covered = fonts.coverage(face)
    assert len(covered) == len(expected)
    assert all(code in covered for code in expected)
    assert max(expected) + 1 not in covered and -1 not in covered and "A" not in covered


def test_badges_render_without_font_tools_installed() -> None:
    # fontTools is a test dependency only (it checks the cmap reader); an installed agent does not have it.
    script = """
import sys
sys.modules["fontTools"] = None  # any import of it now fails, as on an agent installed without it
from drivers.base import Badge
from drivers.label import LabelConfig
from drivers.languages.rendering import render_for
for name in ["María José García", "محمد عبد الله", "山田 太郎", "देवनागरी"]:
    assert render_for("zpl", Badge("j1", "A-1", name, "Acme", "Speaker"), LabelConfig()).startswith(b"^XA")
print("rendered")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "rendered"
