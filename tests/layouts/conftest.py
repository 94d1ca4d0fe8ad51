"""Layout files written in each test's own folder: a logo PNG, an SVG, a one-page PDF."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml


@pytest.fixture
def write_layout(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _write(data: object, name: str = "layout.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, allow_unicode=True))
        return path

    return _write
