"""The device monitor folds in one reading at a time: the probe task and the pull loop both hand it readings."""

from __future__ import annotations

import asyncio

from agent.device import DeviceMonitor
from drivers.base import DeviceState, DeviceStatus
from drivers.sim import SimDriver

GOOD = DeviceStatus(DeviceState.READY)
BAD = DeviceStatus(DeviceState.MEDIA_OUT, ("out of labels",))


def monitor(down_after: int, up_after: int, steps: list[str], test_print_ok: bool | None = None) -> DeviceMonitor:
    """A monitor whose hooks and test print each yield to the event loop half-way, as the agent's do (Redis, the
    printer), and note where they are in ``steps``."""

    async def on_down(status: DeviceStatus) -> None:
        steps.append("down begins")
        await asyncio.sleep(0.01)
        steps.append("down ends")

    async def on_up(status: DeviceStatus) -> None:
        steps.append("up begins")
        await asyncio.sleep(0.01)
        steps.append("up ends")

    async def test_print() -> bool:
        steps.append("test print begins")
        await asyncio.sleep(0.01)
        steps.append("test print ends")
        return bool(test_print_ok)

    return DeviceMonitor(
        SimDriver("desk-1", 0.0),
        probe_interval=1.0,
        down_after=down_after,
        up_after=up_after,
        on_down=on_down,
        on_up=on_up,
        test_print=None if test_print_ok is None else test_print,
    )


async def test_a_reading_that_arrives_while_the_printer_is_declared_down_waits_for_it() -> None:
    """A failed probe declares the printer down while a print's good outcome arrives: the printer is back only after
    its hand-back finished, never while it runs."""
    steps: list[str] = []
    device = monitor(down_after=1, up_after=1, steps=steps)
    await asyncio.gather(device.observe(BAD), device.observe(GOOD))
    assert steps == ["down begins", "down ends", "up begins", "up ends"]
    assert not device.down and device.ready.is_set() and device.status == GOOD


async def test_a_fault_read_during_a_test_print_is_not_lost() -> None:
    """A printer coming back runs its test print; a probe that reads "out of labels" meanwhile is folded in after
    it, so the printer is not left ready on the strength of the earlier good reading."""
    steps: list[str] = []
    device = monitor(down_after=2, up_after=1, steps=steps, test_print_ok=True)
    await device.observe(BAD)
    await device.observe(BAD)
    assert device.down and steps == ["down begins", "down ends"]
    steps.clear()
    await asyncio.gather(device.observe(GOOD), device.observe(BAD))
    assert steps == ["test print begins", "test print ends", "up begins", "up ends"]
    # The fault came last: one failure counted, nothing may be sent to the printer until a good reading.
    assert not device.down and device.failures == 1 and device.successes == 0
    assert not device.ready.is_set() and device.status == BAD
