"""detect lists IPP printers and CUPS queues, and setup --detected N writes a working ``language: ipp`` config: a
real IPP Everywhere printer (ippeveprinter) asked on its port of each host scanned, a real cupsd's queues, all on
loopback; and an ``_ipps`` announcement's printer pinned by the certificate it presents."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent.config import load_config
from cli.commands.detect import Scanners
from cli.main import main
from cli.redis_server import RedisServer
from detect.ipp import probe_ipp
from detect.mdns import IPPS_SERVICE, _ipp_uri
from drivers.ipp.client import format_fingerprint, peer_fingerprint
from tests.support import ipp

pytestmark = pytest.mark.ipp


def scanners(eve: ipp.IppEvePrinter, cups: ipp.Cups) -> Scanners:
    # Loopback only: the "own subnet" is 127.0.0.1 alone, asked IPP on the printer's port; the CUPS server the test's.
    return Scanners(serial_ports=list, subnets=lambda: ["127.0.0.1/32"], ipp_port=eve.port, cups=cups.server)


async def test_detect_lists_the_printer_on_each_host_and_the_cups_servers_queues(
    eve: ipp.IppEvePrinter, cups: ipp.Cups
) -> None:
    cups.add_queue("badges", eve.uri)
    cups.add_queue("tofile", f"file://{cups.directory / 'out' / 'badges.out'}")
    args = ["detect", "--json", "--no-usb", "--no-mdns"]
    listed: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=scanners(eve, cups))
    assert listed.exit_code == 0, listed.output
    found = json.loads(listed.output)
    assert [(f["transport"], f["language"], f["driver"]) for f in found] == [
        ("ipp", "ipp", {"language": "ipp", "uri": f"ipp://127.0.0.1:{eve.port}/ipp/print"}),
        ("ipp", "ipp", {"language": "ipp", "uri": cups.queue_uri("badges")}),
        ("ipp", "ipp", {"language": "ipp", "uri": cups.queue_uri("tofile")}),
    ]
    printer, by_ipp, to_file = found
    assert printer["model"] and printer["state"] == "idle" and printer["media"], printer
    assert (printer["confirmed_by"], by_ipp["confirmed_by"], to_file["confirmed_by"]) == ("device", "device", "spooler")
    text: Result = await asyncio.to_thread(
        CliRunner().invoke, main, ["detect", "--no-usb", "--no-mdns"], obj=scanners(eve, cups)
    )
    assert f"1. ipp ipp://127.0.0.1:{eve.port}/ipp/print  ipp" in text.output, text.output
    assert "confirmed by the spooler" in text.output and f"the CUPS server at {cups.server}" in text.output


async def test_an_ipps_announcement_is_asked_over_tls_with_its_certificate_pinned(eve: ipp.IppEvePrinter) -> None:
    # ippeveprinter answers TLS on its one port (-k made its certificate): as an _ipps announcement names it.
    uri = _ipp_uri(IPPS_SERVICE, "127.0.0.1", eve.port, {b"rp": b"ipp/print"})
    assert uri == f"ipps://127.0.0.1:{eve.port}/ipp/print"
    (found,) = await probe_ipp([], 2.0, announced=[(uri, "Badges")])
    pinned = format_fingerprint(await peer_fingerprint(uri))
    assert found.driver == {"language": "ipp", "uri": uri, "tls_fingerprint": pinned}
    assert found.announced == "Badges" and found.state == "idle"


async def test_setup_detected_writes_an_ipp_config_that_prints(
    tmp_path: Path, eve: ipp.IppEvePrinter, cups: ipp.Cups, redis_server: RedisServer, venue: str
) -> None:
    out = tmp_path / "hall-d-1.yaml"
    args = ["setup", "--yes", "--venue", venue, "--name", "hall-d-1", "--location", "Hall D"]
    args += ["--redis", redis_server.url, "--out", str(out), "--no-start", "--detected", "1", "--no-mdns"]
    result: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=scanners(eve, cups))
    assert result.exit_code == 0, result.output
    assert "test badge: printed" in result.output and "prints confirmed by: device" in result.output
    driver = load_config(out).printer.driver
    assert (driver.language, driver.uri) == ("ipp", f"ipp://127.0.0.1:{eve.port}/ipp/print")
    assert len(eve.printed()) == 1
