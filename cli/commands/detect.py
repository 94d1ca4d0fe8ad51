"""``badge-agent detect``: the printers this machine reaches over USB, serial ports and the network (the hosts
asked for, or this machine's subnet, and the printers that announce themselves over mDNS), each asked what it is."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from core.logs import shown
from detect.identify import Found
from detect.ipp import IPP_PORT
from detect.network import RAW_PORT, hosts_of, own_subnets
from detect.scan import detect_all
from detect.serial import serial_ports

#: Seconds detect listens for mDNS announcements (they pass while USB and serial ports are asked).
MDNS_WINDOW = 1.0
#: detect's exit status when no printer answered (sysexits EX_NOHOST: nothing could be reached), so a script
#: tells "none found" from a listing.
EXIT_NOTHING_FOUND = 68


@dataclass
class Scanners:
    """Where detect looks; tests pass their own (``CliRunner.invoke(..., obj=Scanners(...))``) to stay on loopback."""

    usb_backend: Any = None  # a pyusb backend; None is libusb's
    serial_ports: Callable[[], list[str]] = serial_ports
    #: The networks asked when no --host or --network is given.
    subnets: Callable[[], list[str]] = own_subnets
    #: The addresses mDNS browses on; None is every interface.
    mdns_interfaces: list[str] | None = None
    #: The port each network host is asked IPP on (a printer's or a CUPS server's); None: not asked.
    ipp_port: int | None = IPP_PORT
    #: The local CUPS server whose queues are listed (``HOST:PORT``); None: not asked.
    cups: str | None = f"localhost:{IPP_PORT}"


@dataclass
class Asked:
    """Where one detect run looks: the network hosts (the ones named, or every host of ``networks``), the networks
    by name (for the report), and the serial ports."""

    targets: list[tuple[str, int]]
    networks: list[str]
    ports: list[str]


def plan(
    scanners: Scanners,
    targets: list[tuple[str, int]],
    networks: tuple[str, ...] = (),
    devices: tuple[str, ...] = (),
    *,
    serial: bool = True,
) -> Asked:
    """What detect asks. Raises click.BadParameter for a bad network or a serial device that does not exist."""
    targets = list(targets)
    nets = list(networks) if (targets or networks) else scanners.subnets()
    for net in nets:
        try:
            targets += hosts_of(net)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--network") from None
    for device in devices:
        if not os.path.exists(device):
            raise click.BadParameter(f"{device}: no such device (plugged in? see ls /dev/tty*)", param_hint="--serial")
    # Only the ports named are asked besides the USB-serial adapters: never an on-board UART or a console.
    ports = list(dict.fromkeys([*devices, *(scanners.serial_ports() if serial else [])]))
    return Asked(targets, nets, ports)


def scan(
    scanners: Scanners,
    targets: list[tuple[str, int]],
    networks: tuple[str, ...] = (),
    devices: tuple[str, ...] = (),
    *,
    usb: bool = True,
    serial: bool = True,
    mdns_window: float = MDNS_WINDOW,
    timeout: float = 0.5,
    asked: Asked | None = None,
) -> list[Found]:
    """What ``detect`` lists, numbered the way ``setup --detected N`` counts. Raises click.BadParameter for a bad
    network or a serial device that does not exist. ``asked``: the plan, when the caller made it already."""
    asked = asked or plan(scanners, targets, networks, devices, serial=serial)
    return asyncio.run(
        detect_all(
            asked.targets,
            asked.ports,
            usb=usb,
            timeout=timeout,
            usb_backend=scanners.usb_backend,
            mdns_window=mdns_window,
            mdns_interfaces=scanners.mdns_interfaces,
            named_serial=frozenset(devices),
            named_hosts=frozenset(targets),
            ipp_port=scanners.ipp_port,
            cups=scanners.cups,
        )
    )


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
@click.option("--no-mdns", is_flag=True, help="Do not listen for printers announcing themselves (mDNS).")
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
    no_mdns: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """List the printers this machine reaches and what each says it is, printing nothing.

    USB printers and USB-serial adapters (at 9600, 19200, 38400 and 115200 baud) are asked unless --no-usb /
    --no-serial; an on-board serial port (ttyS*, ttyAMA*) or the kernel's console only when named with --serial.
    Without --host or --network, the machine's own /24 is asked on port 9100. Exits 68 when nothing answered.
    Printers announcing themselves over mDNS (_pdl-datastream, _printer, _ipp) within 1 s are asked too, on the
    raw port they announce (or 9100), unless --no-mdns. IPP printers and CUPS queues are listed too: each host asked
    on port 631, the ones announced as _ipp/_ipps, and the local CUPS server's queues (localhost:631).
    """
    scanners = ctx.find_object(Scanners) or Scanners()
    targets = [_target(h) for h in hosts]
    asked = plan(scanners, targets, networks, devices, serial=not no_serial)
    found = scan(
        scanners,
        targets,
        devices=devices,
        usb=not no_usb,
        mdns_window=0.0 if no_mdns else MDNS_WINDOW,
        timeout=timeout,
        asked=asked,
    )
    report = _asked_lines(asked, hosts, no_usb, no_serial, no_mdns, scanners)
    if as_json:
        click.echo(json.dumps([f.as_dict() for f in found], indent=2))
        if not found:
            click.echo("\n".join(report), err=True)  # stdout stays the JSON list
    else:
        for n, f in enumerate(found, 1):
            click.echo(f"{n}. {describe(f)}")
        if not found:
            click.echo("no printer answered")
        click.echo("\n".join(report))
        if not found:
            click.echo(_nothing_found_hint(no_usb, no_serial, timeout))
    if not found:
        raise SystemExit(EXIT_NOTHING_FOUND)


def _asked_lines(
    asked: Asked, hosts: tuple[str, ...], no_usb: bool, no_serial: bool, no_mdns: bool, scanners: Scanners
) -> list[str]:
    """Which serial ports and networks were asked (on-board serial ports and consoles only when named)."""
    none = "none (--no-serial)" if no_serial else "none (no USB-serial adapter; name a port with --serial DEVICE)"
    ports = ", ".join(asked.ports) or none
    nets = [*hosts, *(f"{net} port {RAW_PORT}" for net in asked.networks)]
    lines = [
        f"serial ports asked: {ports}",
        f"networks asked: {', '.join(nets) or 'none (no address of its own)'}" + ("" if no_mdns else "; mDNS"),
    ]
    ipp = [f"port {scanners.ipp_port} of the hosts asked"] if scanners.ipp_port is not None else []
    ipp += [] if no_mdns else ["_ipp/_ipps announcements"]
    ipp += [f"the CUPS server at {scanners.cups}"] if scanners.cups else []
    lines.append(f"IPP asked: {', '.join(ipp) or 'none'}")
    if no_usb:
        lines.append("USB: not asked (--no-usb)")
    return lines


def _nothing_found_hint(no_usb: bool, no_serial: bool, timeout: float) -> str:
    """How to ask further (what was asked is said above it): a printer on another network, or slow to answer, is
    not found."""
    lines = []
    lines.append("  a network printer: --host HOST[:PORT] (its address, from its status page or the router)")
    lines.append("  another network or VLAN: --network CIDR, e.g. --network 10.0.5.0/24")
    if timeout < 2:
        lines.append(f"  a slow printer: --timeout {max(2.0, timeout * 4):g}")
    if not no_usb:
        lines.append("  USB: is it plugged in and switched on? (lsusb lists it)")
    if not no_serial:
        lines.append("  serial: name the port with --serial /dev/ttyUSB0 (an on-board port or console only so)")
    return "\n".join(lines)


def describe(f: Found) -> str:
    """One printer on one line: link, address, language, model, then what else it told (firmware, serial number,
    media) and the name it announces itself under.

    Everything but the language is what a device or an mDNS announcement said: escaped (``\\x1b``) and cut, so a
    hostile printer can neither drive the terminal (a title, colours, a cleared screen) nor forge a line.
    """
    told = (
        _labelled("firmware", f.firmware),
        _labelled("serial", f.serial_number),
        shown(f.media),
        _labelled("state", f.state),
        _labelled("confirmed by the", f.confirmed_by),
    )
    extra = ", ".join(x for x in told if x)
    line = f"{f.transport} {shown(f.address)}  {f.language}  {shown(f.model)}" + (f"  ({extra})" if extra else "")
    return line + (f'  mDNS "{shown(f.announced)}"' if f.announced else "")


def _labelled(label: str, value: str) -> str:
    return f"{label} {shown(value)}" if value else ""
