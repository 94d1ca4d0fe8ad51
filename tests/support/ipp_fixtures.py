"""The IPP peers as pytest fixtures, for every test module that prints to one (a plugin of tests/conftest.py):
``dnssd`` (a private D-Bus and avahi, one per module: starting them costs a second or two), ``eve`` (an
ippeveprinter beside them) and ``cups`` (a rootless cupsd), each fresh per test. See tests/support/ipp.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ipp


@pytest.fixture(scope="module")
def dnssd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with ipp.dns_sd(tmp_path_factory.mktemp("dnssd")) as env:
        yield env


@pytest.fixture
def eve(tmp_path: Path, dnssd: dict[str, str]) -> Iterator[ipp.IppEvePrinter]:
    with ipp.ippeveprinter(tmp_path / "eve", dnssd) as printer:
        yield printer


@pytest.fixture
def cups(tmp_path: Path) -> Iterator[ipp.Cups]:
    with ipp.cupsd(tmp_path / "cups") as server:
        yield server
