"""A volunteer's first commands as typed, on a venue network of the test's own (tests/support/netns.py):
`badge-agent detect` with no arguments scans the machine's own /24 on port 9100 and listens for mDNS announcements on
every interface, and `badge-agent setup --yes --detected N` takes the Nth printer it lists and test-prints on it.
The printers are emulator processes listening on venue addresses; one of them only on the port it announces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config import load_config
from cli.redis_server import RedisServer
from tests.support.netns import run_in_netns

ZEBRA, BROTHER, ANNOUNCED = "10.99.0.31", "10.99.0.32", "10.99.0.33"

SCRIPT = f"""\
spawn "$OUT/zebra.log" python -m drivers.emulators zpl --host {ZEBRA} --port 9100 --print-time 0.05 \
    --print-log "$OUT/zebra.jsonl"
spawn "$OUT/brother.log" python -m drivers.emulators brother_ql --host {BROTHER} --port 9100 --print-time 0.05 \
    --print-log "$OUT/brother.jsonl"
spawn "$OUT/announced.log" python -m drivers.emulators zpl --host {ANNOUNCED} --port 9300 --print-time 0.05 \
    --print-log "$OUT/announced.jsonl"
spawn "$OUT/mdns.log" python -m tests.support.mdns _pdl-datastream._tcp "Zebra ZT230 Hall C" {ANNOUNCED} 9300
for printer in zebra brother announced; do await_line "$OUT/$printer.log" "listening on"; done
await_line "$OUT/mdns.log" announced

badge-agent detect --json > "$OUT/detect.json"
sleep 1  # the responder's once-a-second limit (tests/support/mdns.py)
badge-agent detect --no-usb --no-serial > "$OUT/detect.txt"
n=$(python -c 'import json, sys; print(1 + [f["address"] for f in json.load(sys.stdin)].index("{ANNOUNCED}:9300"))' \
    < "$OUT/detect.json")
echo "$n" > "$OUT/n"
sleep 1
badge-agent setup --yes --detected "$n" --venue "$VENUE" --name hall-c-1 --location "Hall C" --redis "$REDIS" \
    --out "$OUT/hall-c-1.yaml" > "$OUT/setup.txt" 2>&1
rc=0
badge-agent setup --yes --detected "$n" --no-mdns --venue "$VENUE" --name hall-c-2 --location "Hall C" \
    --redis "$REDIS" --out "$OUT/hall-c-2.yaml" > "$OUT/no-mdns.txt" 2>&1 || rc=$?
echo "$rc" > "$OUT/no-mdns.rc"
"""


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# Slow (about 30 s): detect's timed scans and setup run one after the other in a network namespace.
@pytest.mark.slow
def test_detect_and_setup_detected_as_typed_find_the_venue_printers(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    env = {"OUT": str(tmp_path), "VENUE": venue, "REDIS": redis_server.unix_url}  # a unix socket crosses namespaces
    ran = run_in_netns(SCRIPT, addresses=[ZEBRA, BROTHER, ANNOUNCED], env=env, timeout=100)
    assert ran.returncode == 0, ran.stdout + ran.stderr

    listed = [f for f in json.loads((tmp_path / "detect.json").read_text()) if f["transport"] == "tcp"]
    assert [(f["address"], f["language"], f["model"], f["announced"]) for f in listed] == [
        (f"{ZEBRA}:9100", "zpl", "ZT410-203dpi", ""),
        (f"{BROTHER}:9100", "brother_ql", "QL-820NWB", ""),
        (f"{ANNOUNCED}:9300", "zpl", "ZT410-203dpi", "Zebra ZT230 Hall C"),
    ]
    text = (tmp_path / "detect.txt").read_text()
    assert f"tcp {ANNOUNCED}:9300  zpl  ZT410-203dpi" in text and 'mDNS "Zebra ZT230 Hall C"' in text, text

    setup = (tmp_path / "setup.txt").read_text()
    assert f"tcp {ANNOUNCED}:9300  zpl" in setup and "test badge: printed" in setup, setup
    driver = load_config(tmp_path / "hall-c-1.yaml").printer.driver
    assert (driver.transport, driver.host, driver.port) == ("tcp", ANNOUNCED, 9300)
    # detect printed nothing; setup printed its one test badge, on the printer it chose.
    assert _lines(tmp_path / "zebra.jsonl") == _lines(tmp_path / "brother.jsonl") == []
    assert len(_lines(tmp_path / "announced.jsonl")) == 1

    # Without mDNS the announced printer is not counted: the same N names no printer, and nothing is written.
    no_mdns = (tmp_path / "no-mdns.txt").read_text()
    assert (tmp_path / "no-mdns.rc").read_text().strip() == "2", no_mdns
    n = int((tmp_path / "n").read_text())
    assert (
        f"--detected {n}: detect found {n - 1} printer(s)" in no_mdns and not (tmp_path / "hall-c-2.yaml").exists()
    ), no_mdns
