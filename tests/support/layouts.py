"""The badge the layout tests draw."""

from __future__ import annotations

from pathlib import Path

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
    dpi = 254  # ten pixels a mm: the page is the size asked for
    w, h = round(size_mm[0] / 25.4 * dpi), round(size_mm[1] / 25.4 * dpi)
    page = Image.new("L", (w, h), 255)
    ImageDraw.Draw(page).rectangle((0, 0, w // 2 - 1, h - 1), fill=0)
    page.save(path, "PDF", resolution=dpi)
    return path


def band_layout(
    width_mm: float = 101.6, height_mm: float = 152.4, inset_mm: float = 0.0, **extra: object
) -> dict[str, object]:
    """Logo, name, pronouns, a black band with the ticket type in white for speakers and staff, a QR of ``seat``.

    Drawn for 4x6 in and scaled to other stock (``BAND`` is where the band lies, in fractions of the label); the
    band stops ``inset_mm`` short of each side (a Brother QL prints 58.9 mm of its 62 mm tape).
    """
    sx, sy = width_mm / 101.6, height_mm / 152.4
    s = min(sx, sy)

    def at(x: float, y: float, w: float, h: float) -> dict[str, float]:
        return {"x": round(x * sx, 2), "y": round(y * sy, 2), "w": round(w * sx, 2), "h": round(h * sy, 2)}

    speakers = {"ticket_type": ["Speaker", "Staff"]}
    data: dict[str, object] = {
        "size": {"width_mm": width_mm, "height_mm": height_mm},
        "elements": [
            {"type": "image", "src": "logo.png", **at(30, 4, 41.6, 20)},
            {
                "type": "text",
                "text": "{name}",
                **at(5, 28, 91.6, 36),
                "font_size": round(48 * s),
                "bold": True,
                "max_lines": 2,
            },
            {"type": "text", "text": "{pronouns}", **at(5, 66, 91.6, 8), "font_size": round(14 * s)},
            {"type": "box", **at(0, 78, 101.6, 20), "when": speakers},
            {
                "type": "text",
                "text": "{ticket_type}",
                **at(5, 80, 91.6, 16),
                "font_size": round(40 * s),
                "bold": True,
                "color": "white",
                "when": speakers,
            },
            {"type": "qr", "data": "{seat}", **at(30, 104, 41.6, 41.6)},
        ],
        **extra,
    }
    if inset_mm:
        band = data["elements"][3]  # type: ignore[index]
        band["x"], band["w"] = inset_mm, round(width_mm - 2 * inset_mm, 2)
    return data


#: Where ``band_layout`` puts the band, as fractions of the label: (left, top, right, bottom).
BAND = (0.0, 78 / 152.4, 1.0, 98 / 152.4)
