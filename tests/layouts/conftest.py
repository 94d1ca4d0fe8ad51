"""Layout files written in each test's own folder: a logo PNG, an SVG, a one-page PDF."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from PIL import Image, ImageDraw

from drivers.base import Badge

SPEAKER = Badge(
    job_id="job-1",
    attendee_id="ATT-0001",
    name="Renée Laurent",
    company="Analytical Engines",
    fields={"ticket_type": "Speaker", "pronouns": "she/her", "seat": "S-12"},
)


def write_logo(path: Path, size: tuple[int, int] = (200, 100)) -> Path:
    """A filled ellipse on a transparent ground (a typical logo PNG)."""
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((4, 4, size[0] - 5, size[1] - 5), fill=(20, 40, 160, 255))
    image.save(path)
    return path


def write_pdf(path: Path, size_mm: tuple[float, float]) -> Path:
    """A one-page PDF of ``size_mm`` whose left half is black (Pillow writes the PDF)."""
    dpi = 72
    w, h = round(size_mm[0] / 25.4 * dpi), round(size_mm[1] / 25.4 * dpi)
    page = Image.new("L", (w, h), 255)
    ImageDraw.Draw(page).rectangle((0, 0, w // 2 - 1, h - 1), fill=0)
    page.save(path, "PDF", resolution=dpi)
    return path


@pytest.fixture
def write_layout(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _write(data: object, name: str = "layout.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, allow_unicode=True))
        return path

    return _write


def band_layout(**extra: object) -> dict[str, object]:
    """4x6 in: logo, name, pronouns, a black band with the ticket type in white for speakers, a QR of a field."""
    return {
        "size": {"width_mm": 101.6, "height_mm": 152.4},
        "elements": [
            {"type": "image", "src": "logo.png", "x": 30, "y": 4, "w": 41.6, "h": 20},
            {
                "type": "text",
                "text": "{name}",
                "x": 5,
                "y": 28,
                "w": 91.6,
                "h": 36,
                "font_size": 48,
                "bold": True,
                "max_lines": 2,
            },
            {"type": "text", "text": "{pronouns}", "x": 5, "y": 66, "w": 91.6, "h": 8, "font_size": 14},
            {"type": "box", "x": 0, "y": 78, "w": 101.6, "h": 20, "when": {"ticket_type": ["Speaker", "Staff"]}},
            {
                "type": "text",
                "text": "{ticket_type}",
                "x": 5,
                "y": 80,
                "w": 91.6,
                "h": 16,
                "font_size": 40,
                "bold": True,
                "color": "white",
                "when": {"ticket_type": ["Speaker", "Staff"]},
            },
            {"type": "qr", "data": "{seat}", "x": 30, "y": 104, "w": 41.6, "h": 41.6},
        ],
        **extra,
    }
