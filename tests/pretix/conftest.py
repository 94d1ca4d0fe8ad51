"""Fixtures: a real pretix server (from the package index, cached; see install.py), seeded through its own models.

``pretix`` is one server per test session with the seed data of ``pretix_data.py``. Tests that change data (rename,
cancel) do it on orders they create themselves, so the seeded attendees stay as seeded for every test.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.pretix.install import PretixInstall, ensure_installed, install_dir
from tests.pretix.server import PretixServer

#: Building the cache (pip install + migrate) takes minutes on a fresh machine; the test that first asks for the
#: server waits for it. Only when the cache is missing do these tests get the longer limit.
COLD_BUILD_TIMEOUT = 900


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    ours = [item for item in items if here in Path(str(item.fspath)).parents]
    if ours and not PretixInstall(install_dir()).usable():
        for item in ours:
            item.add_marker(pytest.mark.timeout(COLD_BUILD_TIMEOUT))


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


@pytest.fixture(scope="session")
def pretix_install() -> PretixInstall:
    return ensure_installed()


@pytest.fixture(scope="session")
def pretix_seeded(
    pretix_install: PretixInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """A data folder with the seed data (made once a session) and what the seed created."""
    seeding = PretixServer(pretix_install, tmp_path_factory.mktemp("pretix-seed"))
    try:
        seed = seeding.run_data("seed")
    finally:
        seeding.close()
    return seeding.data, seed


@pytest.fixture(scope="session")
def pretix(
    pretix_install: PretixInstall, pretix_seeded: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pretix]:
    """The session's pretix server, shared by the tests."""
    data, seed = pretix_seeded
    server = PretixServer(pretix_install, tmp_path_factory.mktemp("pretix"), data)
    server.start()
    yield Pretix(server, seed)
    server.close()


@pytest.fixture
def lone_pretix(
    pretix_install: PretixInstall, pretix_seeded: tuple[Path, dict[str, Any]], tmp_path: Path
) -> Iterator[Pretix]:
    """A pretix server of this test's own (same seed), for tests that break or stop it."""
    data, seed = pretix_seeded
    server = PretixServer(pretix_install, tmp_path / "pretix", data)
    server.start()
    yield Pretix(server, seed)
    server.close()


@pytest.fixture
def token_file(pretix: Pretix, tmp_path: Path) -> Path:
    """The seeded API token in a file only its owner can read, as the sync expects it."""
    path = tmp_path / "pretix.token"
    path.write_text(pretix.token + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path
