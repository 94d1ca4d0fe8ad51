"""``badge-agent detect``: the printers this machine reaches on the network, each asked what it is."""

from __future__ import annotations

import asyncio
import json

import click

from drivers.detect import probe_hosts
from drivers.detect.network import RAW_PORT, hosts_of, own_subnets


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
@click.option("--timeout", default=0.5, show_default=True, help="Seconds to wait for each connection and answer.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (with each printer's driver section).")
def detect(hosts: tuple[str, ...], networks: tuple[str, ...], timeout: float, as_json: bool) -> None:
    """List the printers this machine reaches and what each says it is, printing nothing.

    Without --host or --network, the machine's own /24 is asked on port 9100.
    """
    targets = [_target(h) for h in hosts]
    for net in networks if (hosts or networks) else own_subnets():
        try:
            targets += hosts_of(net)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--network") from None
    found = asyncio.run(probe_hosts(targets, timeout))
    if as_json:
        click.echo(json.dumps([f.as_dict() for f in found], indent=2))
        return
    if not found:
        click.echo("no printer answered")
        return
    for n, f in enumerate(found, 1):
        extra = ", ".join(x for x in (f.firmware, f.serial_number, f.media) if x)
        click.echo(f"{n}. {f.transport} {f.address}  {f.language}  {f.model}" + (f"  ({extra})" if extra else ""))
