"""What the webhooks tests share: a receiving endpoint on loopback (tests/webhooks/receiver.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.webhooks.receiver import Receiver


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    r = Receiver()
    await r.start()
    yield r
    await r.stop()
