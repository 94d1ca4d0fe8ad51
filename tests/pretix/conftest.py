"""Fixtures: a real pretix server (from the package index, cached; see install.py), seeded through its own models
(tests/support/pretix_server.py).

``pretix`` is one server per test session with the seed data of ``pretix_data.py``. Tests that change data (rename,
cancel) do it on orders they create themselves, so the seeded attendees stay as seeded for every test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pretix.install import PretixInstall, ensure_installed
from tests.support.pretix_server import COLD_BUILD_TIMEOUT, Pretix, cache_is_cold, running_pretix, seeded_data


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test here needs the real pretix (marked ``pretix``: scripts/test --fast leaves them out); only when its
    cache is missing do they get the longer limit."""
    here = Path(__file__).parent
    ours = [item for item in items if here in Path(str(item.fspath)).parents]
    cold = bool(ours) and cache_is_cold()
    for item in ours:
        item.add_marker(pytest.mark.pretix)
        if cold:
            item.add_marker(pytest.mark.timeout(COLD_BUILD_TIMEOUT))


@pytest.fixture(scope="session")
def pretix_install() -> PretixInstall:
    return ensure_installed()


@pytest.fixture(scope="session")
def pretix_seeded(
    pretix_install: PretixInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """A data folder with the seed data (made once a session) and what the seed created."""
    return seeded_data(pretix_install, tmp_path_factory.mktemp("pretix-seed"))


@pytest.fixture(scope="session")
def pretix(
    pretix_install: PretixInstall, pretix_seeded: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pretix]:
    """The session's pretix server, shared by the tests."""
    with running_pretix(pretix_install, tmp_path_factory.mktemp("pretix"), pretix_seeded) as server:
        yield server


@pytest.fixture
def lone_pretix(
    pretix_install: PretixInstall, pretix_seeded: tuple[Path, dict[str, Any]], tmp_path: Path
) -> Iterator[Pretix]:
    """A pretix server of this test's own (same seed), for tests that break or stop it."""
    with running_pretix(pretix_install, tmp_path / "pretix", pretix_seeded) as server:
        yield server


@pytest.fixture
def token_file(pretix: Pretix, tmp_path: Path) -> Path:
    """The seeded API token in a file only its owner can read, as the sync expects it."""
    path = tmp_path / "pretix.token"
    path.write_text(pretix.token + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path
