"""Waiting for a condition in a test: the benches' poll (bench/common.py), at a test's pace and patience."""

from __future__ import annotations

from collections.abc import Callable

from bench import common


async def wait_until(check: Callable[[], object], timeout: float = 15.0, every: float = 0.05) -> None:
    """Poll ``check`` (a plain or an async callable) until it returns something true; TimeoutError after ``timeout``."""
    await common.wait_until(check, timeout, every)
