"""``badge-agent detect``: the printers this machine reaches over USB, serial ports and the network, each asked
what it is."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from drivers.detect.network import RAW_PORT, hosts_of, own_subnets
from drivers.detect.scan import detect_all
from drivers.detect.serial import serial_ports


@dataclass
class Scanners:
    """Where detect looks for local printers; tests pass their own (``CliRunner.invoke(..., obj=Scanners(...))``)."""

    usb_backend: Any = None  # a pyusb backend; None is libusb's
    serial_ports: Callable[[], list[str]] = serial_ports


def _target(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    if not port:
        return value, RAW_PORT
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value!r}: the port must be a number from 1 to 65535", param_hint="--host")
    return host, int(port)


@click.command()
@click.option("--host", "hosts", multiple=True, metavar="HOST[:PORT]", help="Ask this host (repeatable).")
@click.option("--network", "networks", multiple=True, metavar="CIDR", help="Ask every host of this network.")
@click.option("--serial", "devices", multiple=True, metavar="DEVICE", help="Ask this serial port (repeatable).")
@click.option("--no-usb", is_flag=True, help="Leave USB devices alone.")
@click.option("--no-serial", is_flag=True, help="Ask only the serial ports named with --serial.")
@click.option("--timeout", default=0.5, show_default=True, help="Seconds to wait for each connection and answer.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (with each printer's driver section).")
@click.pass_context
def detect(
    ctx: click.Context,
    hosts: tuple[str, ...],
    networks: tuple[str, ...],
    devices: tuple[str, ...],
    no_usb: bool,
    no_serial: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """List the printers this machine reaches and what each says it is, printing nothing.

    USB printers and the serial ports the kernel lists (at 9600, 19200, 38400 and 115200 baud) are asked
    unless --no-usb / --no-serial; without --host or --network, the machine's own /24 is asked on port 9100.
    """
    scan = ctx.find_object(Scanners) or Scanners()
    targets = [_target(h) for h in hosts]
    for net in networks if (hosts or networks) else own_subnets():
        try:
            targets += hosts_of(net)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--network") from None
    for device in devices:
        if not os.path.exists(device):
            raise click.BadParameter(f"{device}: no such device (plugged in? see ls /dev/tty*)", param_hint="--serial")
    ports = list(dict.fromkeys([*devices, *([] if no_serial else scan.serial_ports())]))
    found = asyncio.run(detect_all(targets, ports, usb=not no_usb, timeout=timeout, usb_backend=scan.usb_backend))
    if as_json:
        click.echo(json.dumps([f.as_dict() for f in found], indent=2))
        return
    if not found:
        click.echo("no printer answered")
        return
    for n, f in enumerate(found, 1):
        extra = ", ".join(x for x in (f.firmware, f.serial_number, f.media) if x)
        click.echo(f"{n}. {f.transport} {f.address}  {f.language}  {f.model}" + (f"  ({extra})" if extra else ""))
