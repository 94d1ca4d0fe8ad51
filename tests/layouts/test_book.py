"""An agent's view of the venue's layouts (real Redis): which layout a badge gets, versions loaded only when they
move, and the fault of a stock no variant fits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from redis.asyncio import Redis

from drivers.base import RenderError
from drivers.label import LabelConfig
from layouts.book import LayoutBook
from layouts.errors import LayoutError
from layouts.files import load_layout
from layouts.model import Layout
from layouts.store import LayoutStore
from tests.support.layouts import SPEAKER, band_layout, write_logo

ZEBRA = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203)


def layout(tmp_path: Path, name: str, width: float = 101.6, height: float = 152.4) -> Layout:
    write_logo(tmp_path / "logo.png")
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(band_layout(width, height)))
    return load_layout(tmp_path / f"{name}.yaml")


async def test_rules_then_the_jobs_layout_then_default_then_built_in(tmp_path: Path, redis: Redis, venue: str) -> None:
    store = LayoutStore(redis, venue)
    book = LayoutBook(store, ZEBRA)
    assert await book.refresh() is False  # nothing set: version 0, nothing loaded
    assert not book.active and book.choose(SPEAKER) is None
    await store.set("speaker", [layout(tmp_path, "speaker")], by="test")
    await store.set("vip", [layout(tmp_path, "vip")], by="test")
    assert await book.refresh() is True and book.active
    attendee = replace(SPEAKER, fields={"ticket_type": "Attendee"})
    assert book.choose(attendee) is None  # no rule, no job layout, no default: the built-in design
    assert book.choose(replace(attendee, layout="vip")) == "vip"
    await store.set_rule("ticket_type=speaker", "speaker", by="test")
    await store.set("default", [layout(tmp_path, "default")], by="test")
    await book.refresh()
    assert book.choose(SPEAKER) == "speaker"  # "Speaker" matches the rule's "speaker": case does not matter
    assert book.choose(replace(SPEAKER, layout="vip")) == "speaker"  # a rule wins over the job's own layout
    assert book.choose(attendee) == "default"
    book.draw(SPEAKER, ZEBRA)
    assert book.used(SPEAKER.job_id) == ("speaker", 1) and book.used(SPEAKER.job_id) is None
    with pytest.raises(RenderError, match="layout 'gala' is not set in this venue"):
        book.draw(replace(attendee, layout="gala"), ZEBRA)


async def test_only_what_changed_is_loaded_again(tmp_path: Path, redis: Redis, venue: str) -> None:
    store = LayoutStore(redis, venue)
    await store.set("speaker", [layout(tmp_path, "speaker")], by="test")
    await store.set("default", [layout(tmp_path, "default")], by="test")
    book = LayoutBook(store, ZEBRA)
    await book.refresh()
    before = {name: loaded.draw for name, loaded in book._state.mine.items()}
    assert await book.refresh() is False
    await store.set("speaker", [layout(tmp_path, "speaker")], by="test")
    assert await book.refresh() is True
    after = book._state.mine
    assert after["default"].draw is before["default"]  # kept, with its prepared images
    assert after["speaker"].draw is not before["speaker"] and after["speaker"].version == 2


async def test_a_stock_no_variant_fits_is_a_fault_naming_layout_and_stock(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    store = LayoutStore(redis, venue)
    await store.set("default", [layout(tmp_path, "default")], by="test")
    book = LayoutBook(store, LabelConfig(width_mm=62, height_mm=100, dpi=300))
    await book.refresh()
    assert book.fault() == (
        "wrong stock for layout 'default': loaded 62x100 mm, the layout has 101.6x152.4 mm "
        "(load that stock, or set a variant of the layout for this one)"
    )
    with pytest.raises(RenderError, match="no variant for this printer's 62x100 mm stock"):
        book.draw(SPEAKER, LabelConfig(width_mm=62, height_mm=100, dpi=300))
    await store.set("default", [layout(tmp_path, "ql", 62, 100)], by="test")
    await book.refresh()
    assert book.fault() is None
    # Within 1 mm is the same stock: a label written 102 x 152 mm takes the 101.6 x 152.4 mm variant.
    near = LayoutBook(store, LabelConfig(width_mm=102, height_mm=152, dpi=203))
    await near.refresh()
    assert near.fault() is None and near.choose(SPEAKER) == "default"


async def test_stored_svgs_and_pdfs_come_drawn_for_every_resolution_so_agents_never_load_their_renderers(
    tmp_path: Path, redis: Redis, redis_server: object, venue: str
) -> None:
    import subprocess
    import sys

    from tests.support.layouts import write_pdf

    (tmp_path / "logo.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'
    )
    write_pdf(tmp_path / "bg.pdf", (101.6, 152.4))
    doc = band_layout(background="bg.pdf")
    doc["elements"][0]["src"] = "logo.svg"  # type: ignore[index]
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(doc))
    store = LayoutStore(redis, venue)
    await store.set("default", [load_layout(tmp_path / "l.yaml")], by="test")
    found = await store.variant("default", "101.6x152.4")
    assert found is not None
    files = sorted(found[1].assets)
    assert "bg.pdf@812x1218.png" in files and "bg.pdf@1200x1800.png" in files and "bg.pdf@2400x3600.png" in files
    assert "logo.svg@332x160.png" in files  # the logo's box at 203 dpi
    code = f"""
import asyncio, sys
from redis.asyncio import Redis
from drivers.label import LabelConfig
from layouts.book import LayoutBook
from layouts.errors import LayoutError
from layouts.store import LayoutStore
from tests.support.layouts import SPEAKER
async def main():
    redis = Redis.from_url({redis_server.url!r})  # type: ignore[attr-defined]
    for dpi in (203, 300, 600):
        book = LayoutBook(LayoutStore(redis, {venue!r}), LabelConfig(width_mm=101.6, height_mm=152.4, dpi=dpi))
        await book.refresh()
        image = book.draw(SPEAKER, book.label)
        assert image.convert("L").getpixel((10, 10)) == 0  # the PDF's black half
    print(sorted(m for m in sys.modules if m.startswith(("pypdfium2", "resvg"))))
asyncio.run(main())
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


async def test_the_reported_stock_picks_the_variant_and_a_change_is_a_fault_until_the_next_look(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    store = LayoutStore(redis, venue)
    await store.set("default", [layout(tmp_path, "zebra"), layout(tmp_path, "ql", 62, 100)], by="test")
    reported: list[LabelConfig | None] = [LabelConfig(width_mm=62, height_mm=100, dpi=300)]
    book = LayoutBook(store, ZEBRA, lambda: reported[0])  # the config says 4x6 in; the printer reports 62x100
    assert await book.refresh() is True
    assert book.stock == "62x100" and book.fault() is None
    book.draw(SPEAKER, reported[0])
    assert book.used(SPEAKER.job_id) == ("default", 1)
    before = book.generation
    reported[0] = LabelConfig(width_mm=29, height_mm=90, dpi=300)  # a roll swap no variant fits
    assert book.fault() == "loaded stock changed to 29x90 mm: choosing the venue's layouts for it"
    assert await book.refresh() is True and book.generation != before  # drawings made ahead are not used
    assert book.fault() == (
        "wrong stock for layout 'default': loaded 29x90 mm, the layout has 101.6x152.4, 62x100 mm "
        "(load that stock, or set a variant of the layout for this one)"
    )
    reported[0] = None  # the printer stops saying: the config's label stands
    assert await book.refresh() is True and book.stock == "101.6x152.4" and book.fault() is None
    assert await book.refresh() is False


async def test_the_store_refuses_the_reserved_name_built_in(tmp_path: Path, redis: Redis, venue: str) -> None:
    """Every caller of ``set`` (the CLI, pretix's layouts) is refused the name separators are drawn under."""
    store = LayoutStore(redis, venue)
    with pytest.raises(LayoutError, match="'built-in' is reserved"):
        await store.set("built-in", [layout(tmp_path, "x")], by="test")
    assert await store.all() == {}
