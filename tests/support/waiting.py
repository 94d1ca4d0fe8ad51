"""Waiting for a condition, for the tests and the benches (bench/): poll it instead of sleeping a guessed time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def wait_until(check: Callable[[], object], timeout: float = 15.0, every: float = 0.05) -> None:
    """Poll ``check`` (a plain or an async callable) every ``every`` seconds until it returns something true;
    TimeoutError after ``timeout``. The benches poll far more often (``every=0.002``): they time what they wait for."""
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(every)
