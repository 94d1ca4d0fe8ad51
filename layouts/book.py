"""An agent's badge layouts: the venue's layouts for the stock its printer has loaded, and which one a badge gets.

Refreshed when the venue's ``layouts:version`` moves (the agent polls it and listens for the announcement), so a
new version is drawn from the next badge on without a restart. Only the variants for this printer's stock are
loaded, each prepared once per label. A layout with no variant for the stock is a fault (``fault``): the printer
stops taking work, as with a wrong roll, instead of taking badges it cannot print.

Which layout a badge gets: the first rule whose field value the job has (``ticket_type=Speaker`` -> ``speaker``),
else the job's own ``layout``, else ``default``; with none of them set, the built-in design.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from drivers.base import Badge, RenderError
from drivers.label import LabelConfig
from layouts.errors import LayoutError
from layouts.model import BUILT_IN_LAYOUT, job_values, stock_name

if TYPE_CHECKING:
    from layouts.draw import LayoutDraw
    from layouts.store import LayoutStore

log = logging.getLogger("agent.layouts")

DEFAULT = "default"
#: A layout's stock fits the printer's when each side is within this (mm): label sizes are written 101.6 or 102.
STOCK_SLACK_MM = 1.0
_USED_KEPT = 64  # job -> (layout, version) entries kept until their confirm asks


def parse_stock(stock: str) -> tuple[float, float] | None:
    try:
        width, height = stock.lower().split("x")
        return float(width), float(height)
    except ValueError:
        return None


def stock_fits(layout_stock: str, printer_stock: str) -> bool:
    a, b = parse_stock(layout_stock), parse_stock(printer_stock)
    return a is not None and b is not None and all(abs(x - y) <= STOCK_SLACK_MM for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class _Loaded:
    version: int
    stock: str
    draw: LayoutDraw


@dataclass(frozen=True)
class _State:
    venue_version: int = 0
    stock: str = ""  # the printer's stock these variants were chosen for
    rules: tuple[tuple[str, str, str], ...] = ()  # (field, value casefolded, layout name)
    mine: Mapping[str, _Loaded] = field(default_factory=dict)
    elsewhere: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # no variant for this stock: its stocks


class LayoutBook:
    """``label``: the config's stock; ``loaded``: what the printer reports it has loaded (None: it does not say),
    which wins over the config's when it does."""

    def __init__(
        self, store: LayoutStore, label: LabelConfig, loaded: Callable[[], LabelConfig | None] | None = None
    ) -> None:
        self.store = store
        self.label = label
        self._loaded = loaded
        self._state = _State(stock=stock_name(label.width_mm, label.height_mm))
        self._generation = 0
        self._used: dict[str, tuple[str, int]] = {}

    @property
    def stock(self) -> str:
        """The stock this printer has loaded ("62x100", mm): as the printer reports it, else its config's label."""
        reported = self._loaded() if self._loaded is not None else None
        label = reported if reported is not None else self.label
        return stock_name(label.width_mm, label.height_mm)

    def stock_moved(self) -> bool:
        """True when the printer reports another stock than the one the loaded variants were chosen for."""
        return self.stock != self._state.stock

    @property
    def generation(self) -> int:
        """Which loading of the layouts this book holds (moves with the venue's version and the loaded stock): a
        drawing made under another one is not used."""
        return self._generation

    @property
    def active(self) -> bool:
        """True when the venue has any layout (else badges get the built-in design, drawn as before)."""
        return bool(self._state.mine or self._state.elsewhere)

    def fault(self) -> str | None:
        """Why this printer cannot print the venue's badges (a layout without a variant for its stock), or None.

        A printer that reports another stock than the variants were loaded for takes no badge until the next
        refresh has chosen the variants for it (``refresh`` does so at its next look)."""
        state = self._state
        if (state.mine or state.elsewhere) and self.stock_moved():
            return f"loaded stock changed to {self.stock} mm: choosing the venue's layouts for it"
        elsewhere = state.elsewhere
        if not elsewhere:
            return None
        name, stocks = next(iter(sorted(elsewhere.items())))
        return (
            f"wrong stock for layout {name!r}: loaded {state.stock} mm, the layout has {', '.join(stocks)} mm "
            "(load that stock, or set a variant of the layout for this one)"
        )

    async def refresh(self) -> bool:
        """Load what changed since the last look (the venue's layouts, or the stock the printer reports); True when
        something did. Raises RedisError."""
        version = await self.store.version()
        state = self._state
        loaded = self.stock
        if version == state.venue_version and loaded == state.stock:
            return False
        stored = await self.store.all()
        rules = await self.store.rules()
        mine: dict[str, _Loaded] = {}
        elsewhere: dict[str, tuple[str, ...]] = {}
        for name, meta in stored.items():
            stock = next((s for s in meta.stocks if stock_fits(s, loaded)), None)
            if stock is None:
                elsewhere[name] = meta.stocks
                continue
            kept = state.mine.get(name)
            if kept is not None and kept.version == meta.version and kept.stock == stock:
                mine[name] = kept  # unchanged: keeps its prepared images
                continue
            try:
                found = await self.store.variant(name, stock)
            except LayoutError as exc:
                log.error(
                    "a stored layout cannot be read; badges it would draw are dead-lettered", extra={"error": exc}
                )
                continue
            if found is not None:
                # The drawing code (Pillow, the fonts) is loaded with the first layout, as the renderer is.
                from layouts.draw import LayoutDraw

                mine[name] = _Loaded(found[0], stock, LayoutDraw(found[1]))
        parsed_rules = []
        for rule, name in rules.items():
            key, _, value = rule.partition("=")
            parsed_rules.append((key, value.strip().casefold(), name))
        self._state = _State(version, loaded, tuple(parsed_rules), mine, elsewhere)
        self._generation += 1
        log.info(
            "badge layouts loaded",
            extra={
                "venue_version": version,
                "stock": loaded,
                "layouts": ",".join(f"{n} v{v.version}" for n, v in mine.items()),
            },
        )
        return True

    def choose(self, badge: Badge) -> str | None:
        """The layout name this badge gets, or None for the built-in design."""
        if badge.layout == BUILT_IN_LAYOUT:
            return None
        state = self._state
        values: dict[str, Any] | None = None
        for key, value, name in state.rules:
            if values is None:
                values = job_values(badge)
            if str(values.get(key, "")).strip().casefold() == value:
                return name
        if badge.layout:
            return badge.layout
        if DEFAULT in state.mine or DEFAULT in state.elsewhere:
            return DEFAULT
        return None

    def draw(self, badge: Badge, label: LabelConfig) -> Any:
        """The driver's ``draw``: this badge in its layout (or the built-in design). Runs in a worker thread.

        Raises:
            RenderError: the layout the badge asks for is not set, has no variant for this stock, or cannot draw it.
        """
        state = self._state  # one picture of the book for the whole badge, even if a refresh lands meanwhile
        name = self.choose(badge)
        if name is None:
            from drivers.render import render_badge

            return render_badge(badge, label)
        loaded = state.mine.get(name)
        if loaded is None:
            if name in state.elsewhere:
                raise RenderError(f"layout {name!r} has no variant for this printer's {state.stock} mm stock")
            raise RenderError(f"layout {name!r} is not set in this venue (badge-agent layout list)")
        image = loaded.draw(badge, label)
        if len(self._used) >= _USED_KEPT:
            self._used.pop(next(iter(self._used)))
        self._used[badge.job_id] = (name, loaded.version)
        return image

    def used(self, job_id: str) -> tuple[str, int] | None:
        """The layout and version the job's badge was drawn with (once: for its printed event)."""
        return self._used.pop(job_id, None)
