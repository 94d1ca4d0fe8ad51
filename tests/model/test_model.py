"""The protocol model in CI: a bounded, derandomized run (scripts/verify runs many more, with a printed seed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.model import machine

#: The Hypothesis model against a real Redis: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.model

CI = settings(
    max_examples=50,
    stateful_step_count=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[machine.ModelWorld]:
    server = machine.model_server(tmp_path / "redis")
    server.start()
    machine.WORLD = machine.ModelWorld(server, tmp_path)
    try:
        yield machine.WORLD
    finally:
        machine.WORLD = None
        server.stop()


def test_every_interleaving_tried_keeps_the_promises(world: machine.ModelWorld) -> None:
    run_state_machine_as_test(machine.ProtocolModel, settings=CI)
    assert world.steps > 0
