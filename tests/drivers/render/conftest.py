"""Shared fixtures: label stocks, and Zebrash (zpl-renderer-js under Node) found or installed, never skipped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import zxingcpp
from PIL import Image

from drivers.label import LabelConfig

NODE_DIR = Path(__file__).with_name("node")

ZEBRA_203 = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203)
ZEBRA_300 = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=300)
BROTHER_62 = LabelConfig(width_mm=62, height_mm=100, dpi=300)
ESCPOS_80 = LabelConfig(width_mm=80, height_mm=100, dpi=203)
LANDSCAPE = LabelConfig(width_mm=101.6, height_mm=76.2, dpi=203)
SMALL = LabelConfig(width_mm=62, height_mm=29, dpi=300)
LABELS = {
    "zebra203": ZEBRA_203,
    "zebra300": ZEBRA_300,
    "brother62": BROTHER_62,
    "escpos80": ESCPOS_80,
    "landscape": LANDSCAPE,
    "small": SMALL,
}


def qr_texts(image: Image.Image) -> list[str]:
    return [r.text for r in zxingcpp.read_barcodes(image.convert("L"))]


class Zebrash:
    """Renders ZPL to PNG with zpl-renderer-js (a WebAssembly build of ingridhq/zebrash)."""

    def __init__(self, node: str) -> None:
        self.node = node

    def render(self, zpl: bytes, label: LabelConfig, out_dir: Path) -> list[Image.Image]:
        prefix = out_dir / "zebrash"
        dpmm = round(label.dpi / 25.4)
        result = subprocess.run(
            [
                self.node,
                str(NODE_DIR / "render_zpl.cjs"),
                str(label.width_mm),
                str(label.height_mm),
                str(dpmm),
                str(prefix),
            ],
            input=zpl,
            capture_output=True,
            timeout=90,
            cwd=NODE_DIR,
            check=False,
        )
        assert result.returncode == 0, f"Zebrash failed: {result.stderr.decode(errors='replace')}"
        count = int(result.stdout.decode().strip().splitlines()[-1])
        return [Image.open(f"{prefix}-{n}.png") for n in range(count)]


@pytest.fixture(scope="session")
def zebrash() -> Zebrash:
    """Zebrash from tests/drivers/render/node, installed with npm (package.json pins it) when not there yet."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        pytest.fail("Node.js is needed to run Zebrash (zpl-renderer-js): install nodejs (>= 18)")
    if not (NODE_DIR / "node_modules" / "zpl-renderer-js").is_dir():
        if npm is None:
            pytest.fail("npm is needed to install zpl-renderer-js: install npm, or run npm install in " + str(NODE_DIR))
        result = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, timeout=300, check=False
        )
        if result.returncode != 0:
            pytest.fail(f"npm install zpl-renderer-js failed in {NODE_DIR}: {result.stderr.decode(errors='replace')}")
    return Zebrash(node)
