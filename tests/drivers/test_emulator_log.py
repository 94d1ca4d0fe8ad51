"""The emulator's print log with and without reading each label back (bench/printers.py turns it off)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import zxingcpp
from PIL import Image

from drivers.base import Outcome
from drivers.emulators import EMULATORS
from drivers.languages import LANGUAGES
from drivers.transports import TcpTransport
from tests.support.drivers import BADGE, LABELS
from tests.support.processes import ROOT
from tests.support.waiting import wait_until


@pytest.mark.parametrize("read_back", [True, False])
async def test_the_log_decodes_labels_only_when_asked(serve, read_back: bool) -> None:
    printer = EMULATORS["zpl"]("p1", print_time=0.02, read_back=read_back)
    driver = LANGUAGES["zpl"](await serve(printer, "tcp"), label=LABELS["zpl"], io_timeout=0.3)
    async with driver:
        assert (await driver.print(driver.render(BADGE), BADGE, timeout=3)).outcome is Outcome.PRINTED
    [entry] = printer.printed()
    assert entry["complete"] and entry["started_t"] <= entry["t"]
    assert entry.get("attendee_id") == (BADGE.attendee_id if read_back else None)


@pytest.mark.parametrize("zxing", [True, False])
async def test_sim_writes_each_label_as_a_png_and_reads_it_back_only_with_zxing(tmp_path: Path, zxing: bool) -> None:
    """``badge-agent sim`` as a user runs it, with and without the development package zxing-cpp: the label is there
    to look at either way, and no entry carries an error for a package a user need not have."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if not zxing:
        stub = tmp_path / "without-zxing"
        stub.mkdir()
        (stub / "zxingcpp.py").write_text("raise ImportError(\"No module named 'zxingcpp'\")\n")
        env["PYTHONPATH"] = os.pathsep.join([str(stub), env.get("PYTHONPATH", "")])
    log = tmp_path / "zebra.jsonl"
    args = ["sim", "zpl", "--port", "0", "--print-time", "0.01", "--print-log", str(log)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        # Bounded: a sim that says less must fail the test, not hang it (terminating it ends the read).
        first = (await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)).decode()
        host, port = first.split(" on ", 1)[1].split(";", 1)[0].rsplit(":", 1)
        said = (await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)).decode()
        assert f"print log: {log}, each label's graphics as a PNG beside it" in said, said
        assert ("zxing-cpp" in said) is not zxing, said
        transport = TcpTransport(host, int(port), connect_timeout=1.0, io_timeout=0.5)
        driver = LANGUAGES["zpl"](transport, label=LABELS["zpl"], io_timeout=0.3)
        async with driver:
            assert (await driver.print(driver.render(BADGE), BADGE, timeout=3)).outcome is Outcome.PRINTED
        await wait_until(lambda: log.is_file() and log.read_text(encoding="utf-8").endswith("\n"), timeout=10)
    finally:
        proc.terminate()
        proc.wait(10)
    [entry] = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert "decode_error" not in entry, entry
    assert entry["attendee_id"] == (BADGE.attendee_id if zxing else None)
    png = log.with_name(entry["image"])
    assert png.parent == tmp_path and png.suffix == ".png"
    [code] = zxingcpp.read_barcodes(Image.open(png).convert("L"))  # what printed, read here where zxing-cpp is
    assert code.text == BADGE.attendee_id
