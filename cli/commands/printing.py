"""``badge-agent preview`` and ``test-print``: the badge a config draws, as a picture and on paper."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, BinaryIO

import click

from agent.config import AgentConfig, load_config
from cli.commands.files import file_options, open_export
from cli.main import EXIT_PRINTER, fail
from core.errors import EXIT_CONFIG, ConfigError, JobError
from core.logs import shown
from drivers.base import Badge, DriverError, Outcome, RenderError
from protocol.jobs import parse_job

_DECODERS = {
    "zpl": ("drivers.render.zpl", "decode_zpl_graphics"),
    "brother_ql": ("drivers.render.brother", "decode_brother_raster"),
    "escpos": ("drivers.render.escpos", "decode_escpos_raster"),
}


def _config(path: str) -> AgentConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
    raise AssertionError("unreachable")


def _driver(config: AgentConfig, path: str) -> Any:
    from drivers import build_driver

    try:
        return build_driver(config.printer.driver, config.printer.name)
    except (DriverError, ValueError) as exc:
        fail(f"config error in {path}: printer.driver: {exc}", EXIT_CONFIG)


def test_badge(config: AgentConfig) -> Badge:
    """Venue, printer, location and time on one badge; its QR code carries the printer's name."""
    when = time.strftime("%H:%M:%S")
    return Badge(
        job_id=f"test-print-{config.printer.name}",
        attendee_id=f"TEST-{config.printer.name}",
        name=f"Test badge {config.printer.name}",
        company=config.venue,
        role=f"{config.printer.location} {when}",
    )


@click.command()
@click.option("-c", "--config", "config_path", required=True, help="The agent's YAML config.")
@click.option("--name", default=None, help="The attendee name to draw.")
@click.option("--company", default="", help="Company line.")
@click.option("--role", default="", help="Role line.")
@click.option(
    "--file", "file", type=click.File("rb"), help="An attendee file (CSV, JSON lines, XLSX) as enqueue reads it."
)
@file_options
@click.option("-o", "--out", default="preview.png", show_default=True, help="PNG to write (one per row: -N).")
def preview(
    config_path: str,
    name: str | None,
    company: str,
    role: str,
    file: BinaryIO | None,
    encoding: str | None,
    delimiter: str | None,
    maps: tuple[str, ...],
    preset: str | None,
    out: str,
) -> None:
    """Write the exact bitmap the agent would send for a badge, read back from the printer bytes."""
    import importlib

    config = _config(config_path)
    driver = _driver(config, config_path)
    if config.printer.driver.language not in _DECODERS:
        fail(f"{config_path}: preview needs a printer language (zpl, brother_ql, escpos), not 'sim'", EXIT_CONFIG)
    module, attr = _DECODERS[config.printer.driver.language]
    decode = getattr(importlib.import_module(module), attr)
    badges: list[tuple[str, Badge]] = []
    if file is not None:
        export = open_export(file, "auto", encoding, delimiter, maps, preset)
        for number, row, error in export.rows:
            try:
                if row is None:
                    raise JobError(error)
                job = parse_job({"attendee_id": f"PREVIEW-{number}", **row})
            except JobError as exc:
                click.echo(f"row {number}: skipped: {shown(str(exc), 300)}", err=True)
                continue
            badges.append((f"row {number}", job.badge()))
    elif name is not None:
        badges.append(
            ("badge", Badge(job_id="preview-1", attendee_id="PREVIEW-1", name=name, company=company, role=role))
        )
    else:
        fail("say what to draw: --name NAME or --file FILE")
    if not badges:
        fail("no row of the file makes a badge")
    stem = Path(out)
    for n, (where, badge) in enumerate(badges, 1):
        try:
            pages = decode(driver.render(badge))
        except RenderError as exc:
            fail(f"{where} ({shown(badge.name, 100)}): {exc}", EXIT_CONFIG)
        target = stem if len(badges) == 1 else stem.with_name(f"{stem.stem}-{n}{stem.suffix}")
        pages[0].save(target)
        click.echo(f"{target}: {pages[0].width}x{pages[0].height} dots")


@click.command("test-print")
@click.option("-c", "--config", "config_path", required=True, help="The agent's YAML config.")
@click.option("--timeout", default=None, type=float, help="Seconds to wait for the outcome (print_timeout).")
def test_print(config_path: str, timeout: float | None) -> None:
    """Print one test badge through the real driver and report the confirmed outcome."""
    config = _config(config_path)
    driver = _driver(config, config_path)
    outcome, reason = asyncio.run(print_test_badge(config, driver, timeout))
    click.echo(f"test badge: {outcome.value} ({reason})")
    if outcome is not Outcome.PRINTED:
        raise SystemExit(EXIT_PRINTER)


async def print_test_badge(config: AgentConfig, driver: Any, timeout: float | None) -> tuple[Outcome, str]:
    badge = test_badge(config)
    try:
        data = driver.render(badge)
    except RenderError as exc:
        return Outcome.FAILED, f"cannot draw the badge: {exc}"
    try:
        await driver.open()
        result = await driver.print(data, badge, timeout or config.printer.driver.print_timeout)
    except DriverError as exc:
        return Outcome.FAILED, f"printer unreachable: {exc}"
    finally:
        await driver.aclose()
    return result.outcome, result.reason
