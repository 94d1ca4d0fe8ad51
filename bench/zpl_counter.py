"""A Zebra that answers its label counter asked alone but not after ``~HS`` in the same write: seconds a badge through
the real ZPL driver over TCP, against one that answers both together (the ZPL emulator, ``counter_after_status``).

    .venv/bin/python -m bench.zpl_counter [--badges N] [--print-time S] [--io-timeout S]

The driver notices the first combined query that came back without the counter and asks the two apart from then on
(drivers/languages/zpl.py), so only the first badge waits out ``io_timeout``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from drivers.base import Badge, Outcome
from drivers.emulators.fronts import TcpFront
from drivers.emulators.zpl import ZplPrinter
from drivers.languages import LANGUAGES
from drivers.transports import TcpTransport
from tests.support.drivers import LABELS


async def badge_seconds(together: bool, badges: int, print_time: float, io_timeout: float) -> list[float]:
    """Seconds each badge took from ``print()`` to its confirmed outcome."""
    printer = ZplPrinter("bench", print_time=print_time, counter_after_status=together, read_back=False)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    transport = TcpTransport(host, port, connect_timeout=1.0, io_timeout=io_timeout)
    driver = LANGUAGES["zpl"](transport, label=LABELS["zpl"], io_timeout=io_timeout)
    took = []
    try:
        await driver.open()
        for n in range(badges):
            badge = Badge(job_id=f"b-{n}", attendee_id=f"A-{n}", name=f"Guest {n}", company="", role="")
            data = driver.render(badge)
            started = time.monotonic()
            result = await driver.print(data, badge, timeout=60)
            took.append(time.monotonic() - started)
            if result.outcome is not Outcome.PRINTED:
                raise RuntimeError(f"badge {n}: {result}")
    finally:
        await driver.aclose()
        await front.stop()
        await printer.stop()
    return took


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--badges", type=int, default=10)
    parser.add_argument("--print-time", type=float, default=0.5)
    parser.add_argument("--io-timeout", type=float, default=3.0)
    args = parser.parse_args()
    print(
        f"## ZPL label counter answered only when asked alone: seconds a badge ({args.badges} badges, "
        f"{args.print_time:g} s a label, io_timeout {args.io_timeout:g} s)"
    )
    print("| printer answers the counter | first badge | later badges, median | later badges, max |")
    print("|---|---|---|---|")
    for together in (True, False):
        took = await badge_seconds(together, args.badges, args.print_time, args.io_timeout)
        rest = took[1:]
        label = "after ~HS in the same write" if together else "only when asked alone"
        print(f"| {label} | {took[0]:.2f} | {statistics.median(rest):.2f} | {max(rest):.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
