"""An agent's view of the venue's layouts (real Redis): which layout a badge gets, versions loaded only when they
move, and the fault of a stock no variant fits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from redis.asyncio import Redis

from drivers.base import RenderError
from drivers.config import LabelConfig
from layouts.book import LayoutBook
from layouts.files import load_layout
from layouts.model import Layout
from layouts.store import LayoutStore

from .conftest import SPEAKER, band_layout, write_logo

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
