"""How the commands that read attendee files (``enqueue --file``, ``preview --file``, ``attendees import``) take
their options and open the file: one reader (cli/registration_files.py), one set of options."""

from __future__ import annotations

from typing import Any, BinaryIO

import click

from cli.main import fail
from cli.registration_files import PRESETS, ColumnMap, Export, read_export
from core.errors import UserError
from protocol.jobs import Job


def file_options(command: Any) -> Any:
    """--encoding, --delimiter, --map and --preset: how an attendee file is read (every command that reads one)."""
    for option in reversed(
        [
            click.option(
                "--encoding",
                help="The file's encoding (default: UTF-8 with or without BOM, UTF-16 by BOM, else cp1252).",
            ),
            click.option("--delimiter", help="CSV: , ; or tab (default: the one the header row has most of)."),
            click.option(
                "--map",
                "maps",
                multiple=True,
                help="FIELD=COLUMN or FIELD='{Column} {Other}' (repeatable), e.g. name='{First Name} {Last Name}'; "
                "a FIELD that is not a job field goes into the badge's fields (ticket_type={Product}).",
            ),
            click.option(
                "--preset", type=click.Choice(sorted(PRESETS)), help="The column mapping of a registration export."
            ),
        ]
    ):
        command = option(command)
    return command


def open_export(
    file: BinaryIO,
    fmt: str,
    encoding: str | None,
    delimiter: str | None,
    maps: tuple[str, ...],
    preset: str | None,
    quiet: bool = False,
    for_list: bool = False,
) -> Export:
    """Read FILE through the one reader; a file that cannot be read at all stops the command with its name."""
    name = getattr(file, "name", "-")
    try:
        mapping = ColumnMap.parse(maps, preset, for_list) if maps or preset else None
        export = read_export(file, name, encoding=encoding, delimiter=delimiter, fmt=fmt, mapping=mapping)
    except UserError as exc:
        fail(f"{name}: {exc}")
        raise AssertionError("unreachable") from None
    if export.format != "xlsx" and export.encoding not in ("utf-8", "utf-8-sig") and encoding is None and not quiet:
        click.echo(
            f"note: the file is not UTF-8; read as {export.encoding} (give --encoding if that is wrong)", err=True
        )
    return export


def badge_says(job: Job) -> str:
    """What the badge will say, on one line: name, company, role and the event's fields (for --dry-run)."""
    parts = [job.name, job.company, job.role, *(f"{k}={v}" for k, v in job.fields.items())]
    return " | ".join(part for part in parts if part)
