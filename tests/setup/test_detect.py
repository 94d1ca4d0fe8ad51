"""detect finds the emulators over TCP, each with the right language and model, and none prints a label."""

from __future__ import annotations

import json

from click.testing import CliRunner

from agent.cli import main
from drivers.detect import probe_hosts
from drivers.detect.network import hosts_of
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import TcpFront

EXPECTED = {
    "zpl": ("ZT410-203dpi", "V75.20.01Z"),
    "brother_ql": ("QL-820NWB", ""),
    "escpos": ("ESC/POS printer", ""),
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
    result = CliRunner().invoke(main, ["detect", "--network", "127.0.0.0/30", "--timeout", "0.2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == []
    result = CliRunner().invoke(main, ["detect", "--network", "127.0.0.0/33"])
    assert result.exit_code == 2 and "--network" in result.output
