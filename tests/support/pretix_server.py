"""A real pretix server for the tests in tests/pretix/: the cached install (tests/pretix/install.py), a data folder
seeded through pretix's own models (tests/pretix/pretix_data.py), and a running server over a copy of it with what the
seed created.

tests/pretix/conftest.py turns these into fixtures: one seeded folder and one server a session, and a server of a
test's own for tests that break or stop it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.pretix.install import PretixInstall, install_dir
from tests.pretix.server import PretixServer

#: Building the cache (pip install + migrate) takes minutes on a fresh machine; the test that first asks for the
#: server waits for it. Only when the cache is missing do these tests get the longer limit.
COLD_BUILD_TIMEOUT = 900


def cache_is_cold() -> bool:
    """No usable install yet: the first test to ask for a server builds it (``COLD_BUILD_TIMEOUT``)."""
    return not PretixInstall(install_dir()).usable()


@dataclass
class Pretix:
    """The running server and what the seed created (ids, secrets, the token)."""

    server: PretixServer
    seed: dict[str, Any]

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return str(self.seed["token"])

    @property
    def organizer(self) -> str:
        return str(self.seed["organizer"])

    @property
    def event(self) -> str:
        return str(self.seed["event"])

    @property
    def entrance(self) -> int:
        return int(self.seed["checkin_lists"]["Entrance"])

    def position(self, name: str | None = None, index: int | None = None) -> dict[str, Any]:
        positions: list[dict[str, Any]] = self.seed["positions"]
        if index is not None:
            return positions[index]
        return next(p for p in positions if p["name"] == name)

    def data(self, *args: str) -> Any:
        return self.server.run_data(*args)


def seeded_data(install: PretixInstall, folder: Path) -> tuple[Path, dict[str, Any]]:
    """A data folder under ``folder`` with the seed data (tests/pretix/pretix_data.py ``seed``), and what the seed
    created. The server that seeded it is closed: servers start on copies of the folder."""
    seeding = PretixServer(install, folder)
    try:
        seed = seeding.run_data("seed")
    finally:
        seeding.close()
    return seeding.data, seed


@contextmanager
def running_pretix(install: PretixInstall, folder: Path, seeded: tuple[Path, dict[str, Any]]) -> Iterator[Pretix]:
    """A pretix server in ``folder`` on a copy of ``seeded``'s data folder, closed at the end of the block."""
    data, seed = seeded
    server = PretixServer(install, folder, data)
    server.start()
    try:
        yield Pretix(server, seed)
    finally:
        server.close()
