"""``badge-agent sim``: a printer emulator for rehearsals, speaking the real protocol over TCP or a serial pty."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import click

from core.logs import setup_logging


@click.command()
@click.argument("kind", type=click.Choice(["zpl", "brother_ql", "escpos", "dymo", "dymo550", "tspl"]))
@click.option("--transport", type=click.Choice(["tcp", "serial"]), default="tcp", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=9100, show_default=True, help="TCP port (0 = any free port).")
@click.option("--print-time", default=1.0, show_default=True, help="Seconds a badge.")
@click.option("--control-file", type=click.Path(dir_okay=False, path_type=Path), help='JSON {"fault": ...} to switch.')
@click.option(
    "--print-log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON lines of what came out; each label's graphics as a PNG beside it, named in its line.",
)
@click.option("--name", help="Printer name in the print log.")
def sim(
    kind: str,
    transport: str,
    host: str,
    port: int,
    print_time: float,
    control_file: Path | None,
    print_log: Path | None,
    name: str | None,
) -> None:
    """Emulate a ZPL, Brother QL, ESC/POS, DYMO LabelWriter 450 (dymo) or 550 (dymo550) or TSPL printer until Ctrl-C.

    Faults switch at run time through the control file: echo '{"fault": "media_out"}' > FILE (media_out, head_open,
    ribbon_out, jam, overheat, paused, power_off, no_answer; null clears). Serial prints the pty path to use as
    the agent's `device`.
    """
    from drivers.emulators.cli import serve

    setup_logging("warning")

    def ready(where: str) -> None:
        click.echo(f"{where}; Ctrl-C stops it")
        if print_log is not None:
            from drivers.emulators.decode import qr_reader

            read = (
                "the attendee id read from its QR code"
                if qr_reader() is not None
                else "no attendee id read back (that needs the zxing-cpp package)"
            )
            click.echo(
                f"print log: {print_log}, each label's graphics as a PNG beside it ({print_log.stem}.00001.png "
                f"...), {read}"
            )

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(kind, transport, host, port, print_time, control_file, print_log, name, ready=ready))
