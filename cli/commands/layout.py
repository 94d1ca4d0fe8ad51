"""``badge-agent layout``: the venue's badge layouts in its Redis (set, list, show, rm, rules) and previews.

``set`` checks everything before anything is stored (the file, its images, that every live printer of the venue
has a variant for its loaded stock), so a refused layout leaves the venue printing with the version it had.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from cli.main import Target, fail, fleet_options, run_async
from cli.registration_files import PRESETS, ColumnMap, read_export
from core.errors import EXIT_CONFIG, JobError, UserError
from drivers.label import LabelConfig
from layouts.book import DEFAULT, stock_fits
from layouts.errors import LayoutError
from layouts.model import BUILT_IN_LAYOUT, RESERVED_NAME, Layout
from protocol.jobs import LAYOUT_NAME, parse_job

_NAME_HELP = "The layout's name in the venue (default: the file's `name:`, else the file name)."


def _load(path: Path, source: str, background: Path | None, label: str | None) -> Layout:
    try:
        if source == "pretix":
            from layouts.pretix import load_pretix

            return load_pretix(path, background, _parse_label(label) if label else None)
        from layouts.files import load_layout

        return load_layout(path)
    except LayoutError as exc:
        fail("layout refused, nothing changed:\n  " + "\n  ".join(exc.problems))
        raise AssertionError("unreachable") from exc


def _parse_label(text: str) -> tuple[float, float]:
    try:
        width, height = (float(v) for v in text.lower().split("x"))
    except ValueError:
        fail(f"--label {text!r}: expected WIDTHxHEIGHT in mm, e.g. 101.6x152.4")
        raise
    return width, height


@click.group("layout")
def layout() -> None:
    """The venue's badge layouts (see docs/layouts.md)."""


@layout.command("set")
@fleet_options
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", "name", help=_NAME_HELP)
@click.option("--from", "source", type=click.Choice(["ours", "pretix"]), default="ours", show_default=True)
@click.option("--background", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="pretix: the PDF.")
@click.option("--label", help="pretix without a background PDF: the page size, WIDTHxHEIGHT in mm.")
@click.option("--pretix", "pretix_url", help="--from pretix without FILE: fetch the event's layouts from this pretix.")
@click.option("--event", help="With --pretix: ORGANIZER/EVENT.")
@click.option("--token-file", type=click.Path(path_type=Path), help="With --pretix: the API token's file (mode 600).")
def set_layout(
    target: Target,
    files: tuple[Path, ...],
    name: str | None,
    source: str,
    background: Path | None,
    label: str | None,
    pretix_url: str | None,
    event: str | None,
    token_file: Path | None,
) -> None:
    """Store a layout (one FILE per stock: its variants) under its next version; agents draw it from the next badge.

    --from pretix --pretix URL --event ORG/EVENT --token-file FILE (no FILE): every badge layout of the pretix event,
    pretix's default one as `default`, and a rule ticket_type=PRODUCT -> LAYOUT for each product assigned to one.
    """
    if pretix_url is not None:
        if files or name or background or label:
            fail("--pretix fetches every layout of the event: give no FILE, --name, --background or --label with it")
        if source != "pretix" or not event or token_file is None:
            fail("give --from pretix --pretix URL --event ORGANIZER/EVENT --token-file FILE")
        _set_from_pretix(target, pretix_url, str(event), Path(str(token_file)))
        return
    if not files:
        fail("give the layout FILE(s), or --from pretix --pretix URL --event ORG/EVENT --token-file FILE")
    variants = [_load(path, source, background, label) for path in files]
    name = name or str(variants[0].document.get("name") or files[0].stem)
    if name == BUILT_IN_LAYOUT:
        fail(f"layout refused, nothing changed: {RESERVED_NAME}")
    if not LAYOUT_NAME.fullmatch(name):
        fail(f"--name {name!r}: lowercase letters, digits, - and _, at most 64 (as a job's `layout` is written)")
    version, picked_by = run_async(_set(target, name, variants))
    stocks = ", ".join(v.stock for v in variants)
    click.echo(f"layout {name} v{version} set ({stocks} mm); {_who_gets(name, picked_by)}")


def _who_gets(name: str, picked_by: list[str]) -> str:
    """Which badges the layout reaches from the agents' next one: a layout no rule picks reaches only the jobs that
    name it, so saying "agents draw it" alone would leave staff waiting for a design that never comes."""
    naming = f"jobs naming it in their `layout` field (enqueue --layout {name})"
    if name == DEFAULT:
        return "agents draw it from their next badge for every job no rule and no `layout` field sends elsewhere"
    if picked_by:
        return f"agents draw it from their next badge for jobs with {' or '.join(picked_by)}, and {naming}"
    return (
        f"no rule picks it: only {naming} get it, no other badge until "
        f"`badge-agent layout rules --add FIELD=VALUE:{name}` (e.g. ticket_type=Speaker:{name})"
    )


def _set_from_pretix(target: Target, url: str, event: str, token_file: Path) -> None:
    """``layout set --from pretix --pretix ...``: the event's layouts and pretix's product assignments as rules."""
    import tempfile

    from pretix_sync.client import PretixClient
    from pretix_sync.errors import PretixError
    from pretix_sync.follow import parse_event
    from pretix_sync.layouts import as_venue_layouts, fetch_layouts
    from pretix_sync.token import read_token

    try:
        organizer, slug = parse_event(event)
    except click.BadParameter as exc:
        fail(f"--event {event!r}: {exc.message}", EXIT_CONFIG)
        return

    async def fetch_and_set() -> list[tuple[str, int, list[str]]] | PretixError:
        try:
            async with PretixClient(url, organizer, slug, read_token(token_file)) as client:
                fetched = await fetch_layouts(client)
        except PretixError as exc:  # its own exit status (78 settings, 69 unreachable), not run_async's 2
            return exc
        if not fetched.layouts:
            raise UserError(f"pretix event {event} has no badge layouts (is its Badges plugin on?)")
        with tempfile.TemporaryDirectory(prefix="badge-pretix-layouts-") as folder:
            try:
                found = as_venue_layouts(fetched, Path(folder))
            except LayoutError as exc:
                raise UserError("layouts refused, nothing changed:\n  " + "\n  ".join(exc.problems)) from None
        done: list[tuple[str, int, list[str]]] = []
        for name, variant, _ in found:
            done.append((name, (await _set(target, name, [variant]))[0], []))
        redis = target.client()
        try:
            from layouts.store import LayoutStore

            store = LayoutStore(redis, target.venue)
            for (name, _, products), entry in zip(found, done, strict=True):
                for product in products:
                    await store.set_rule(f"ticket_type={product}", name, by="pretix")
                    entry[2].append(product)
        finally:
            await redis.aclose()
        return done

    result = run_async(fetch_and_set())
    if not isinstance(result, list):
        fail(str(result), result.exit_code)
        return
    for name, version, products in result:
        used = f"; ticket_type {', '.join(products)} -> {name}" if products else ""
        click.echo(f"layout {name} v{version} set from pretix{used}")
    click.echo("agents draw them from their next badge")


async def _set(target: Target, name: str, variants: list[Layout]) -> tuple[int, list[str]]:
    """Store the layout under its next version: (the version, the rules that pick it)."""
    from layouts.store import LayoutStore

    redis = target.client()
    try:
        store = LayoutStore(redis, target.venue)
        existing = await store.get(name)
        stocks = {v.stock for v in variants} | set(existing.stocks if existing else ())
        stranded = [
            f"{printer} has {stock} mm loaded"
            for printer, stock in sorted((await store.printer_stocks()).items())
            if not any(stock_fits(s, stock) for s in stocks)
        ]
        if stranded:
            raise UserError(
                f"layout {name} refused, nothing changed: it has no variant for the stock of "
                + "; ".join(stranded)
                + f" (its variants: {', '.join(sorted(stocks))} mm). Give one file per stock: "
                f"layout set A.yaml B.yaml --name {name}"
            )
        try:
            version, _ = await store.set(name, variants, by="cli")
        except LayoutError as exc:  # a pretix layout under the reserved name
            raise UserError(f"layout {name} refused, nothing changed: " + "; ".join(exc.problems)) from None
        return version, await store.rules_for(name)
    finally:
        await redis.aclose()


@layout.command("list")
@fleet_options
def list_layouts(target: Target) -> None:
    """Every layout of the venue: its version and stocks."""
    stored = run_async(_with_store(target, lambda s: s.all()))
    if not stored:
        click.echo("no layouts: badges get the built-in design")
        return
    for item in stored.values():
        click.echo(f"{item.name}  v{item.version}  stocks {', '.join(item.stocks)}  set by {item.by}")


@layout.command("show")
@fleet_options
@click.argument("name")
def show_layout(target: Target, name: str) -> None:
    """A layout's versions and each variant's document (as JSON, its files named)."""

    async def show(store: Any) -> dict[str, Any] | None:
        meta = await store.get(name)
        if meta is None:
            return None
        variants = {}
        for stock in meta.stocks:
            found = await store.variant(stock=stock, name=name)
            if found is not None:
                variants[stock] = {"version": found[0], "document": found[1].document, "files": sorted(found[1].assets)}
        return {"name": name, "version": meta.version, "set_by": meta.by, "variants": variants}

    shown = run_async(_with_store(target, show))
    if shown is None:
        fail(f"no layout {name!r} in venue {target.venue} (badge-agent layout list)")
    click.echo(json.dumps(shown, indent=2, ensure_ascii=False))


@layout.command("rm")
@fleet_options
@click.argument("name")
def rm_layout(target: Target, name: str) -> None:
    """Remove a layout (all its variants) and the rules that pick it."""
    removed, rules = run_async(_with_store(target, lambda s: s.remove(name, by="cli")))
    if not removed:
        fail(f"no layout {name!r} in venue {target.venue}")
    click.echo(f"layout {name} removed" + (f", with its rules: {', '.join(rules)}" if rules else ""))


@layout.command("rules")
@fleet_options
@click.option("--add", "adds", multiple=True, metavar="FIELD=VALUE:LAYOUT", help="e.g. ticket_type=Speaker:speaker")
@click.option("--rm", "rms", multiple=True, metavar="FIELD=VALUE", help="Stop a rule.")
def rules(target: Target, adds: tuple[str, ...], rms: tuple[str, ...]) -> None:
    """Which field value picks which layout; else the job's `layout`; else `default`; else the built-in design."""
    changes: list[tuple[str, str]] = []
    for entry in adds:
        rule, sep, name = entry.rpartition(":")
        if not sep or "=" not in rule or not name:
            fail(f"--add {entry!r}: expected FIELD=VALUE:LAYOUT, e.g. ticket_type=Speaker:speaker")
        changes.append((rule.strip(), name.strip()))
    for entry in rms:
        if "=" not in entry:
            fail(f"--rm {entry!r}: expected FIELD=VALUE")
        changes.append((entry.strip(), ""))

    async def apply(store: Any) -> dict[str, str]:
        for rule, name in changes:
            if await store.set_rule(rule, name, by="cli") == -1:
                raise UserError(f"rule {rule} -> {name}: no layout {name!r} in the venue (badge-agent layout list)")
        result: dict[str, str] = await store.rules()
        return result

    found = run_async(_with_store(target, apply))
    if not found:
        click.echo("no rules: a badge gets its job's layout, else `default`, else the built-in design")
    for rule, name in found.items():
        click.echo(f"{rule} -> {name}")


async def _with_store(target: Target, action: Any) -> Any:
    from layouts.store import LayoutStore

    redis = target.client()
    try:
        return await action(LayoutStore(redis, target.venue))
    finally:
        await redis.aclose()


@layout.command("preview")
@click.argument("what")
@click.option("--job", "job_json", help='One job as JSON, e.g. \'{"attendee_id": "A1", "name": "Ana"}\'.')
@click.option(
    "--file", "-f", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="CSV, JSONL or XLSX."
)
@click.option("--map", "maps", multiple=True, help="As enqueue's: FIELD=COLUMN (repeatable).")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), help="The column mapping of a registration export.")
@click.option("--encoding", help="The file's encoding.")
@click.option("-o", "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="OUT.png")
@click.option("--label", help="WIDTHxHEIGHT in mm (default: the layout's size).")
@click.option("--dpi", type=click.IntRange(100, 600), default=300, show_default=True)
@click.option("--from", "source", type=click.Choice(["ours", "pretix"]), default="ours", show_default=True)
@click.option("--sheet", type=click.Path(dir_okay=False, path_type=Path), help="Also one contact sheet of them all.")
@click.option("-c", "--config", "config_path", help="For a stored layout NAME: an agent's config.")
@click.option("--redis", "redis_url", envvar="BADGE_REDIS_URL", help="For a stored layout NAME: Redis URL.")
@click.option("--venue", envvar="BADGE_VENUE", help="For a stored layout NAME: the venue.")
def preview(
    what: str,
    job_json: str | None,
    file: Path | None,
    maps: tuple[str, ...],
    preset: str | None,
    encoding: str | None,
    out: Path,
    label: str | None,
    dpi: int,
    source: str,
    sheet: Path | None,
    config_path: str | None,
    redis_url: str | None,
    venue: str | None,
) -> None:
    """Draw the exact bitmap a printer gets, for one job or every row of a file (OUT-1.png, OUT-2.png, ...).

    WHAT is a layout file, or the name of a layout stored in the venue (with -c or --redis/--venue).
    """
    if (job_json is None) == (file is None):
        fail("give --job JSON for one badge, or --file FILE for every row of an export")
    path = Path(what)
    if path.is_file():
        chosen = _load(path, source, None, label if source == "pretix" else None)
    else:
        chosen = _stored(what, label, config_path, redis_url, venue)
    width, height = _parse_label(label) if label else (chosen.size.width_mm, chosen.size.height_mm)
    stock = LabelConfig(width_mm=width, height_mm=height, dpi=dpi)
    from layouts.draw import LayoutDraw

    logging.getLogger("layouts").setLevel(logging.ERROR)  # empty fields are reported below, row by row
    draw = LayoutDraw(chosen)
    rows = _job_rows(job_json, file, maps, preset, encoding)
    problems = drawn = 0
    thumbnails: list[tuple[str, Any]] = []
    for number, row, error in rows:
        where = f"row {number}" if file is not None else "job"
        if row is None:
            click.echo(f"{where}: not read: {error}", err=True)
            problems += 1
            continue
        try:
            badge = parse_job(row).badge()
            result = draw.prepared(stock).draw(badge)
        except (JobError, LayoutError) as exc:
            click.echo(f"{where}: {exc}", err=True)
            problems += 1
            continue
        except Exception as exc:  # noqa: BLE001 - RenderError and the like: reported per row, the rest go on
            click.echo(f"{where}: cannot be drawn: {exc}", err=True)
            problems += 1
            continue
        target = out if file is None else out.with_name(f"{out.stem}-{number}{out.suffix or '.png'}")
        result.image.save(target, dpi=(dpi, dpi))
        if sheet is not None:
            thumbnails.append((f"{where}: {badge.name}", result.image))
        drawn += 1
        empty = f" (empty: {', '.join(result.empty_fields)})" if result.empty_fields else ""
        click.echo(f"{where}: {target}{empty}")
    if sheet is not None:
        from layouts.sheet import contact_sheet

        contact_sheet(thumbnails).save(sheet)
        click.echo(f"contact sheet: {sheet}")
    click.echo(f"drew {drawn}, could not draw {problems}")
    if problems:
        sys.exit(1)


def _stored(name: str, label: str | None, config_path: str | None, redis_url: str | None, venue: str | None) -> Layout:
    """A layout NAME from the venue: the variant for ``label`` (or its first)."""
    target: Target = fleet_options(lambda t: t)(config_path=config_path, redis_url=redis_url, venue=venue)

    async def fetch(store: Any) -> Layout | None:
        meta = await store.get(name)
        if meta is None:
            return None
        stock = meta.stocks[0]
        if label:
            width, height = _parse_label(label)
            stock = next((s for s in meta.stocks if stock_fits(s, f"{width:g}x{height:g}")), "")
            if not stock:
                raise UserError(f"layout {name} has no variant for {label} mm (it has {', '.join(meta.stocks)})")
        found = await store.variant(name, stock)
        return None if found is None else found[1]

    found: Layout | None = run_async(_with_store(target, fetch))
    if found is None:
        fail(f"no layout {name!r} in venue {target.venue}, and no file of that name")
        raise AssertionError("unreachable")
    return found


def _job_rows(
    job_json: str | None, file: Path | None, maps: tuple[str, ...], preset: str | None, encoding: str | None
) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    if job_json is not None:
        try:
            row = json.loads(job_json)
        except json.JSONDecodeError as exc:
            fail(f"--job: not JSON: {exc}")
        return iter([(1, row if isinstance(row, dict) else None, "not a JSON object")])
    if file is None:
        return iter([])
    # The one reader of attendee files, as enqueue --file and attendees import read them (the delimiter sniffed, a
    # workbook's sheet found); read whole here, so that a --map column the file lacks stops the preview with one
    # message rather than part way through it.
    try:
        mapping = ColumnMap.parse(list(maps), preset) if maps or preset else None
        with file.open("rb") as fh:
            rows = list(read_export(fh, file.name, encoding=encoding, mapping=mapping).rows)
    except UserError as exc:
        fail(f"{file}: {exc}")
        raise
    return iter(rows)
