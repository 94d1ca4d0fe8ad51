"""``badge-agent sim`` as a user runs it: one plain line on stdout says where the printer listens (not a warning on
stderr), and detect finds it there."""

from __future__ import annotations

import select
import signal
import subprocess
import sys

from click.testing import CliRunner

from cli.main import main
from tests.support.detect import LOOPBACK


def test_sim_says_where_it_listens_on_stdout_and_answers_there() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "sim", "zpl", "--port", "0", "--print-time", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        readable, _, _ = select.select([proc.stdout], [], [], 20)
        assert readable, "sim said nothing on stdout within 20 s"
        line = proc.stdout.readline()
        assert line.startswith("zpl printer listening on 127.0.0.1:") and line.endswith("; Ctrl-C stops it\n"), line
        address = line.split(" on ")[1].split(";")[0]
        found = CliRunner().invoke(
            main, ["detect", "--host", address, "--no-usb", "--no-serial", "--no-mdns"], obj=LOOPBACK
        )
        assert found.output.startswith(f"1. tcp {address}  zpl  ZT410-203dpi"), found.output
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "warning" not in err, err
