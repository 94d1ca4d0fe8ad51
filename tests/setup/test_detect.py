"""detect finds the emulators over TCP, the emulated pyusb backend and a pty, each with the right language and
model, and none prints a label."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from click.testing import CliRunner, Result

from cli.commands.detect import EXIT_NOTHING_FOUND, Scanners
from cli.main import main
from detect import probe_hosts
from detect.network import hosts_of
from detect.serial import probe_serial
from detect.usb import probe_usb
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import PtyFront, TcpFront
from drivers.emulators.usb_backend import EmulatedUsbBackend
from tests.support.detect import LOOPBACK

#: Model and firmware each emulator reports (ZPL ~HI, Brother status, ESC/POS GS I), and its own serial number
#: (SGD device.unique_id, GS I 68; a Brother tells none over the print port).
EXPECTED = {
    "zpl": ("ZT410-203dpi", "V75.20.01Z"),
    "brother_ql": ("QL-820NWB", ""),
    "escpos": ("EPSON TM-T88VI", "30.02 ESC/POS"),
}
SERIALS = {"zpl": "52J162300042", "brother_ql": "", "escpos": "X5Y9012345"}
MEDIA = {
    "zpl": "label length 1218 dots",
    "brother_ql": "62 mm continuous tape",
    "escpos": "80 mm paper (72 mm printable)",
}


async def _serve(kind: str, stack: list) -> tuple:
    printer = EMULATORS[kind]("p-" + kind, print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    stack += [front, printer]
    return printer, host, port


async def test_detect_finds_each_emulator_over_tcp_and_prints_nothing() -> None:
    stack: list = []
    try:
        served = {kind: await _serve(kind, stack) for kind in EXPECTED}
        targets = [(h, p) for _, h, p in served.values()]
        found = await probe_hosts([("127.0.0.1", 9), *targets], timeout=0.5)  # port 9: nothing listens
        assert [f.language for f in found] == list(EXPECTED)
        for f in found:
            assert (f.model, f.firmware) == EXPECTED[f.language]
            assert (f.serial_number, f.media) == (SERIALS[f.language], MEDIA[f.language])
            _, host, port = served[f.language]
            assert f.driver["host"] == host and f.driver["port"] == port and f.driver["transport"] == "tcp"
        brother = next(f for f in found if f.language == "brother_ql")
        assert brother.media == "62 mm continuous tape" and brother.driver["model"] == "QL-820NWB"
        for printer, _, _ in served.values():
            assert printer.log == [] and printer.printed() == []
    finally:
        for item in stack:
            await item.stop()


def test_hosts_of_a_network_is_every_host_address() -> None:
    assert hosts_of("127.0.0.0/30") == [("127.0.0.1", 9100), ("127.0.0.2", 9100)]
    assert hosts_of("127.0.0.5/32", 9101) == [("127.0.0.5", 9101)]


def test_detect_cli_json_and_bad_network() -> None:
    # Only loopback is ever probed here; 127.0.0.0/30 has no printer on 9100.
    result = CliRunner().invoke(
        main,
        ["detect", "--network", "127.0.0.0/30", "--timeout", "0.2", "--json", "--no-usb", "--no-serial", "--no-mdns"],
        obj=LOOPBACK,
    )
    # Nothing answered: an empty list, and an exit status of its own; what was asked goes to stderr.
    assert result.exit_code == EXIT_NOTHING_FOUND == 68, result.output
    assert json.loads(result.stdout) == []
    assert "networks asked: 127.0.0.0/30 port 9100" in result.stderr
    result = CliRunner().invoke(main, ["detect", "--network", "127.0.0.0/33"], obj=LOOPBACK)
    assert result.exit_code == 2 and "--network" in result.output
    result = CliRunner().invoke(main, ["detect", "--no-usb", "--serial", "/dev/no-such-tty"], obj=LOOPBACK)
    assert result.exit_code == 2 and "/dev/no-such-tty: no such device" in result.output


#: The vendor id each kind's emulator presents on USB (Zebra, Brother, Epson).
VENDORS = {"zpl": 0x0A5F, "brother_ql": 0x04F9, "escpos": 0x04B8}


@pytest.mark.parametrize("kind", list(EXPECTED))
async def test_detect_finds_the_emulator_over_usb_and_prints_nothing(kind: str) -> None:
    printer = EMULATORS[kind]("usb-" + kind, print_time=0.05)
    await printer.start()
    backend = EmulatedUsbBackend(printer, asyncio.get_running_loop(), vendor_id=VENDORS[kind], serial_number="SN42")
    try:
        found = await probe_usb(timeout=0.3, backend=backend)
        assert [(f.transport, f.language, f.model, f.firmware) for f in found] == [("usb", kind, *EXPECTED[kind])]
        ids = {"vendor_id": f"{VENDORS[kind]:04x}", "product_id": "0164", "serial_number": "SN42"}
        # The config matches the USB descriptor's serial; detect shows the one the printer itself reports, if any.
        assert {k: found[0].driver[k] for k in ids} == ids
        assert found[0].serial_number == (SERIALS[kind] or "SN42")
        assert found[0].address == f"{VENDORS[kind]:04x}:0164 serial SN42"
        assert not backend.claimed  # released for the agent
        assert backend.kernel_driver_active  # usblp given back: a CUPS queue on the printer still works
        assert printer.log == [] and printer.printed() == []
    finally:
        await printer.stop()


@pytest.mark.parametrize("fault", ["power_off", "no_answer"])
async def test_usb_device_that_is_off_or_silent_is_not_reported(fault: str) -> None:
    printer = EMULATORS["zpl"]("usb-off", print_time=0.05)
    await printer.start()
    printer.set_fault(fault)  # power_off: not enumerated; no_answer: enumerated, opened, and silent
    backend = EmulatedUsbBackend(printer, asyncio.get_running_loop())
    try:
        assert await probe_usb(timeout=0.2, backend=backend) == []
        assert not backend.claimed
    finally:
        await printer.stop()


@pytest.mark.parametrize("kind", list(EXPECTED))
async def test_detect_finds_the_emulator_on_a_serial_port_and_prints_nothing(kind: str) -> None:
    printer = EMULATORS[kind]("pty-" + kind, print_time=0.05)
    await printer.start()
    front = PtyFront(printer)
    path = await front.start()
    silent_master, silent_slave = os.openpty()  # a port with nothing behind it
    silent = os.ttyname(silent_slave)
    try:
        found = await probe_serial([silent, path], timeout=0.1)
        assert [(f.transport, f.language, f.model, f.firmware) for f in found] == [("serial", kind, *EXPECTED[kind])]
        # A pty takes any baud rate, so the first one asked is the one reported.
        assert found[0].driver == {"language": kind, "transport": "serial", "device": path, "baudrate": 9600} | (
            {"model": "QL-820NWB"} if kind == "brother_ql" else {}
        )
        assert printer.log == [] and printer.printed() == []
    finally:
        os.close(silent_master)
        os.close(silent_slave)
        await front.stop()
        await printer.stop()


async def test_detect_cli_lists_usb_and_serial_printers() -> None:
    zebra, brother = EMULATORS["zpl"]("usb-z", print_time=0.05), EMULATORS["brother_ql"]("pty-b", print_time=0.05)
    await zebra.start()
    await brother.start()
    front = PtyFront(brother)
    path = await front.start()
    backend = EmulatedUsbBackend(zebra, asyncio.get_running_loop())
    scan = Scanners(
        usb_backend=backend,
        serial_ports=lambda: [path],
        subnets=list,
        mdns_interfaces=["127.0.0.1"],
        ipp_port=None,
        cups=None,
    )
    args = ["detect", "--host", "127.0.0.1:9", "--timeout", "0.2", "--no-mdns"]
    try:
        # The command runs its own event loop; the emulators answer on this one.
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--json"], obj=scan)
        assert listed.exit_code == 0, listed.output
        found = json.loads(listed.output)
        assert [(f["transport"], f["language"], f["model"]) for f in found] == [
            ("usb", "zpl", "ZT410-203dpi"),
            ("serial", "brother_ql", "QL-820NWB"),
        ]
        assert found[0]["driver"]["vendor_id"] == "0a5f" and found[1]["driver"]["device"] == path
        text: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--no-usb", "--no-serial"], obj=scan)
        assert text.output.startswith(
            "no printer answered\nserial ports asked: none (--no-serial)\nnetworks asked: 127.0.0.1:9\n"
        ), text.output
        assert text.exit_code == 68
        assert "--host HOST[:PORT]" in text.output and "--network CIDR" in text.output
        assert "--serial /dev/ttyUSB0" not in text.output  # serial ports were left alone: no advice about them
        named: Result = await asyncio.to_thread(
            CliRunner().invoke, main, [*args, "--no-usb", "--no-serial", "--serial", path], obj=scan
        )
        assert named.output.startswith(f"1. serial {path} 9600 baud  brother_ql  QL-820NWB  (62 mm continuous tape)")
        usb: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--no-serial"], obj=scan)
        assert usb.output == (
            "1. usb 0a5f:0164 serial EMU0001  zpl  ZT410-203dpi  "
            "(firmware V75.20.01Z, serial 52J162300042, label length 1218 dots)\n"
            "serial ports asked: none (--no-serial)\nnetworks asked: 127.0.0.1:9\n"
            "IPP asked: none\n"
        ), usb.output
        assert zebra.log == [] and brother.log == [] and zebra.printed() == brother.printed() == []
    finally:
        await front.stop()
        await brother.stop()
        await zebra.stop()


async def test_detect_finds_a_serial_printer_at_its_own_baud_rate() -> None:
    printer = EMULATORS["zpl"]("pty-38400", print_time=0.05)
    await printer.start()
    front = PtyFront(printer, baudrate=38400)  # 9600 and 19200 are asked first and not understood
    path = await front.start()
    try:
        found = await probe_serial([path], timeout=0.2)
        assert [(f.address, f.model, f.driver["baudrate"]) for f in found] == [
            (f"{path} 38400 baud", "ZT410-203dpi", 38400)
        ]
        assert printer.log == [] and printer.printed() == []
        assert await probe_serial([path], timeout=0.2, rates=(9600, 19200)) == []
    finally:
        await front.stop()
        await printer.stop()


async def test_detect_text_output_escapes_what_a_hostile_printer_reports() -> None:
    """Model, firmware and serial number come from the device: shown escaped, never acted on by the terminal."""
    zebra = EMULATORS["zpl"]("hostile", print_time=0.05)
    zebra.model = "ZT410\x1b]0;owned\x07\r\n2. tcp 10.0.0.9:9100  zpl  forged"  # a title, then a forged line
    zebra.firmware = "V1\x1b[2J\x9b1m"  # clear the screen (ESC, and the 8-bit CSI a terminal may take)
    zebra.serial_number = "52J\x1b[31mRED\nline"
    await zebra.start()
    front = TcpFront(zebra)
    host, port = await front.start()
    args = ["detect", "--host", f"{host}:{port}", "--no-usb", "--no-serial", "--no-mdns"]
    try:
        text: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=LOOPBACK)
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--json"], obj=LOOPBACK)
    finally:
        await front.stop()
        await zebra.stop()
    assert text.exit_code == 0, text.output
    shown = [
        line
        for line in text.output.splitlines()
        if not line.startswith(("serial ports asked", "networks", "IPP asked", "USB"))
    ]
    assert len(shown) == 1 and text.output.startswith("1. tcp "), repr(text.output)
    assert not any(ch in text.output for ch in "\x1b\x07\r\x9b"), repr(text.output)
    assert "ZT410\\x1b]0;owned\\x07\\x0d\\x0a2. tcp" in text.output, text.output
    assert "firmware V1\\x1b[2J" in text.output and "serial 52J\\x1b[31mRED\\x0aline" in text.output
    [found] = json.loads(listed.output)  # the JSON keeps the values exactly, escaped by JSON itself
    assert found["model"].startswith("ZT410\x1b]0;owned") and found["serial_number"] == zebra.serial_number
    assert "\x1b" not in listed.output
