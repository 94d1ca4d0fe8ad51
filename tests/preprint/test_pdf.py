"""A run as a PDF on a real redis-server: a separator page a box, sheets of badges with cut marks, every badge
drawn as the agents draw it (its QR code read back from the rendered page), a badge that cannot be drawn listed and
made void (never a blank one), and its attendees pre-printed only once the admin says the sheets are printed."""

from __future__ import annotations

from pathlib import Path

import pypdfium2
import pytest
import zxingcpp
from PIL import Image
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from core.errors import UserError
from preprint.pdf import grid
from preprint.printing import write_pdf
from preprint.store import PreprintStore
from tests.support.attendee_files import rows

PEOPLE = [
    {"attendee_id": "qr-adams", "name": "Eva Adams", "company": "Café Zürich"},
    {"attendee_id": "qr-kowalski", "name": "Jan Kowalski"},
    {"attendee_id": "qr-private", "name": "\ue000\ue001 Ng"},  # private-use characters: no font draws them
    {"attendee_id": "qr-mueller", "name": "Anna Müller"},
    {"attendee_id": "qr-zimmer", "name": "Ζωή Ζίμμερ"},
]


async def planned(redis: Redis, venue: str) -> PreprintStore:
    attendees = AttendeeStore(redis, venue)
    await Importer(attendees).load(iter(rows(PEOPLE)))
    store = PreprintStore(redis, venue, attendees)
    await store.plan("night", box_size=2, pickup="the welcome desk")
    return store


def rendered(path: Path, page: int, scale: float = 150 / 72) -> Image.Image:
    document = pypdfium2.PdfDocument(str(path))
    try:
        return document[page].render(scale=scale).to_pil().convert("L")
    finally:
        document.close()


def page_count(path: Path) -> int:
    document = pypdfium2.PdfDocument(str(path))
    try:
        return len(document)
    finally:
        document.close()


async def test_a_pdf_has_a_separator_a_box_cut_marks_and_badges_whose_qr_reads_back(
    redis: Redis, venue: str, tmp_path: Path
) -> None:
    store = await planned(redis, venue)
    out = tmp_path / "badges.pdf"
    report = await write_pdf(store, "night", out, sheet="a4", dpi=150, workers=2)
    # boxes: Adams - Kowalski, then Müller and Ng (the private-use name's family name), then Zimmer (Greek)
    boxes = await store.boxes(await store.need_run("night"))
    assert [b.count for b in boxes] == [2, 2, 1]
    # a separator page a box, then one A4 sheet of (at most two) 4x6 in badges each
    assert report.pages == page_count(out) == 6
    assert report.badges == 4
    assert [(c, w.split(":")[0]) for c, _, w in report.left_out] == [("qr-private", "cannot be drawn")]
    first_sheet = rendered(out, 1)
    found = {r.text for r in zxingcpp.read_barcodes(first_sheet)}
    assert found == {"qr-adams", "qr-kowalski"}
    # cut marks: ink in the top margin on the line of the first cut, none where no cut is
    g = grid("a4", "101.6x152.4", 150, None, False)
    assert g.columns == 2 and g.rows == 1
    assert min(first_sheet.getpixel((g.left, y)) for y in range(g.top - 20, g.top - 3)) < 128
    assert min(first_sheet.getpixel((g.left + 40, y)) for y in range(g.top - 20, g.top - 3)) > 200
    # the separator page is not blank and reads no code
    separator = rendered(out, 0)
    assert separator.getextrema()[0] < 128 and zxingcpp.read_barcodes(separator) == []
    # the undrawn attendee is void (the door prints theirs); nobody is pre-printed yet
    voids = await store.voids("night")
    assert [(v.code, v.printed) for v in voids] == [("qr-private", False)]
    run = await store.need_run("night")
    assert run.mode == "pdf" and run.state == "planned"
    assert (await store.counts(run))["preprinted"] == 0
    assert await store.done("night") == 4
    counts = await store.counts(await store.need_run("night"))
    assert (counts["preprinted"], counts["void"]) == (4, 1)
    with pytest.raises(UserError, match="marked printed already"):
        await store.done("night")
    with pytest.raises(UserError, match="a PDF would print them twice"):
        await write_pdf(store, "night", tmp_path / "again.pdf", dpi=150, workers=1)


async def test_a_butterfly_badge_has_its_back_half_turned(redis: Redis, venue: str, tmp_path: Path) -> None:
    store = await planned(redis, venue)
    out = tmp_path / "butterfly.pdf"
    report = await write_pdf(store, "night", out, sheet="letter", dpi=100, butterfly=True, workers=1, stock="80x120")
    g = grid("letter", "80x120", 100, None, True)
    assert g.cell_h == round(240 / 25.4 * 100) and g.per_sheet == 2 and report.pages == 3 + 3
    sheet = rendered(out, 1, scale=100 / 72)
    codes = zxingcpp.read_barcodes(sheet)
    # each code twice: the front, and the back turned upside down above it (its corner then lies bottom right)
    assert sorted(c.text for c in codes) == ["qr-adams", "qr-adams", "qr-kowalski", "qr-kowalski"]
    adams = sorted((c for c in codes if c.text == "qr-adams"), key=lambda c: c.position.top_left.y)
    fold = g.top + g.cell_h // 2
    assert adams[0].position.top_left.y < fold < adams[1].position.top_left.y
    assert adams[0].position.top_left.x > adams[0].position.bottom_right.x  # read upside down


def test_sheets_that_cannot_hold_the_badges_say_so() -> None:
    with pytest.raises(UserError, match="--per-sheet: 1-2 badges"):
        grid("a4", "101.6x152.4", 300, 3, False)
    with pytest.raises(UserError, match="does not fit on letter"):
        grid("letter", "101.6x152.4", 300, None, True)
    with pytest.raises(UserError, match="--sheet must be one of"):
        grid("a3", "101.6x152.4", 300, None, False)
    assert grid("a4", "54x86", 300, 4, False).per_sheet == 4
