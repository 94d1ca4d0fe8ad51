"""The emulator's print log with and without reading each label back (bench/printers.py turns it off)."""

from __future__ import annotations

import pytest

from drivers.base import Outcome
from drivers.emulators import EMULATORS
from drivers.languages import LANGUAGES
from tests.support.drivers import BADGE, LABELS


@pytest.mark.parametrize("read_back", [True, False])
async def test_the_log_decodes_labels_only_when_asked(serve, read_back: bool) -> None:
    printer = EMULATORS["zpl"]("p1", print_time=0.02, read_back=read_back)
    driver = LANGUAGES["zpl"](await serve(printer, "tcp"), label=LABELS["zpl"], io_timeout=0.3)
    async with driver:
        assert (await driver.print(driver.render(BADGE), BADGE, timeout=3)).outcome is Outcome.PRINTED
    [entry] = printer.printed()
    assert entry["complete"] and entry["started_t"] <= entry["t"]
    assert entry.get("attendee_id") == (BADGE.attendee_id if read_back else None)
