"""An event's badge layouts from pretix's badge designer, with their background PDFs and which product uses which.

pretix prints a ticket's badge with the layout assigned to its product, else the event's default layout. The venue
picks a layout by the job's ``ticket_type`` (the product's name, see ``records``), so the assignments become rules
``ticket_type = product name -> layout``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from layouts.errors import LayoutError
from layouts.model import Layout
from pretix_sync.api_types import i18n_text
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixConfigError


@dataclass(frozen=True)
class PretixLayout:
    """One designer layout: its elements as pretix stores them (positions in mm from the bottom-left), the
    background PDF (pretix's own A6 default when none was uploaded), and the products assigned to it."""

    id: int
    name: str
    default: bool
    elements: list[dict[str, Any]]
    background: bytes | None
    products: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EventLayouts:
    layouts: list[PretixLayout]

    @property
    def default(self) -> PretixLayout | None:
        return next((layout for layout in self.layouts if layout.default), None)

    def rules(self) -> dict[str, str]:
        """``ticket_type`` (a product's name) -> the name of the layout pretix would print it with."""
        return {product: layout.name for layout in self.layouts for product in layout.products}


async def fetch_layouts(client: PretixClient) -> EventLayouts:
    """Every badge layout of the event, its background downloaded, its products by name."""
    products = {item.id: i18n_text(item.name) for item in await client.items()}
    fetched = []
    for layout in await client.badge_layouts():
        if not isinstance(layout.layout, list) or not all(isinstance(e, dict) for e in layout.layout):
            raise PretixConfigError(
                f"pretix at {client.base}: badge layout {layout.name!r} is not a list of elements; check pretix's"
                " version"
            )
        background = await client.download(layout.background) if layout.background else None
        if background is not None and not background.startswith(b"%PDF-"):
            raise PretixConfigError(
                f"pretix at {client.base}: the background of badge layout {layout.name!r} is not a PDF"
                f" ({layout.background})"
            )
        names = [products.get(a.item, f"product {a.item}") for a in layout.item_assignments]
        fetched.append(PretixLayout(layout.id, layout.name, layout.default, layout.layout, background, names))
    return EventLayouts(fetched)


#: The layout name pretix's default layout is stored under: what a badge with no rule and no job layout gets.
DEFAULT_NAME = "default"


def layout_name(layout: PretixLayout, taken: set[str]) -> str:
    """The venue's name for a pretix layout: ``default`` for pretix's default one (the venue's fallback too), else
    its name as a layout name is written (lowercase letters, digits, - and _), made unique with pretix's id."""
    if layout.default:
        return DEFAULT_NAME
    slug = re.sub(r"[^a-z0-9_-]+", "-", layout.name.casefold()).strip("-_")[:50] or f"pretix-{layout.id}"
    if not slug[0].isalnum():
        slug = f"pretix-{slug}"
    if slug in taken or slug == DEFAULT_NAME:
        slug = f"{slug}-{layout.id}"
    return slug


def as_venue_layouts(event: EventLayouts, folder: Path) -> list[tuple[str, Layout, list[str]]]:
    """Each pretix layout read as the venue's layout (``layouts.pretix``: pretix's elements and background PDF, as
    ``layout set --from pretix FILE`` reads a saved one), by the name it is stored under, with its products.

    Raises:
        LayoutError: a layout the venue cannot print, each problem naming the pretix layout.
    """
    from layouts.pretix import load_pretix

    out: list[tuple[str, Layout, list[str]]] = []
    taken: set[str] = set()
    for layout in event.layouts:
        name = layout_name(layout, taken)
        taken.add(name)
        path = folder / f"{name}.json"
        path.write_text(json.dumps({"layout": layout.elements}), encoding="utf-8")
        background = None
        if layout.background is not None:
            background = folder / f"{name}.pdf"
            background.write_bytes(layout.background)
        try:
            venue_layout = load_pretix(path, background)
        except LayoutError as exc:
            raise LayoutError([f"pretix badge layout {layout.name!r}: {p}" for p in exc.problems]) from None
        out.append((name, venue_layout, layout.products))
    return out
