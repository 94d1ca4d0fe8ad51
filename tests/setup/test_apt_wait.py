"""scripts/setup waits for a busy apt (a Pi's first boot runs unattended-upgrades) instead of failing at once.

The lock is a file of the test's own, locked the way apt and dpkg lock theirs (fcntl): the machine's apt locks are
never taken, and nothing is installed (apt-get is replaced by a shell function that says what it was asked).
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APT_WAIT = ROOT / "scripts" / "apt-wait"


@contextmanager
def held(path: Path) -> Iterator[None]:
    with path.open("w") as fh:
        fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what apt-get does to /var/lib/dpkg/lock-frontend
        yield


def _apt_part() -> str:
    """scripts/setup's apt lines, from the wait to the install, as the script has them."""
    lines = (ROOT / "scripts" / "setup").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "APT_WAIT:-" in line)
    end = next(i for i, line in enumerate(lines) if "apt-get -o" in line and " install " in line)
    return "\n".join(lines[start : end + 1])


def _start(command: list[str], lock: Path, **env: str) -> subprocess.Popen[str]:
    environ = {**os.environ, "APT_LOCKS": str(lock), **env}
    return subprocess.Popen(command, cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], 20)
    assert readable, "nothing said within 20 s"
    return proc.stdout.readline()


def test_setup_waits_for_a_busy_apt_says_so_and_installs_once_it_is_free(tmp_path: Path) -> None:
    lock = tmp_path / "lock-frontend"
    script = 'set -euo pipefail\nsudo=""\nmissing=(pkg-a pkg-b)\napt-get() { echo "apt-get $*" >&2; }\n' + _apt_part()
    with held(lock):
        proc = _start(["bash", "-c", script], lock, APT_WAIT="60")
        line = _first_line(proc)
        assert f"apt is busy: {lock} is held by process {os.getpid()}" in line, line
        time.sleep(1.5)  # the behaviour under test: setup still waits a while later, the lock still held
        assert proc.poll() is None
        released = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert time.monotonic() - released < 10
    calls = [line for line in err.splitlines() if line.startswith("apt-get")]  # stderr: setup hides apt's stdout
    assert calls == [
        "apt-get -o DPkg::Lock::Timeout=60 update -qq",
        "apt-get -o DPkg::Lock::Timeout=60 install -y -qq pkg-a pkg-b",
    ], err


def test_apt_wait_gives_up_after_its_timeout_naming_the_holder(tmp_path: Path) -> None:
    lock = tmp_path / "lock-frontend"
    with held(lock):
        started = time.monotonic()
        proc = _start([str(APT_WAIT), "1"], lock)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and time.monotonic() - started < 15
    assert f"still held by process {os.getpid()}" in err and "after 1 s" in err, err
    assert "apt is busy" in out


def test_apt_wait_returns_at_once_when_apt_is_free(tmp_path: Path) -> None:
    lock = tmp_path / "lock-frontend"
    lock.touch()
    proc = _start([str(APT_WAIT), "60"], lock)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (0, "", "")
