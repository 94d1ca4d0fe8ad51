"""Run a shell script inside a fresh network namespace: a venue's network that no packet leaves.

Inside, ``lo`` is up with 127.0.0.1 and the venue address 10.99.0.1/24 and the default route points at it, so the
machine's "own /24" (what ``detect`` scans without --host or --network) is 10.99.0.0/24, mDNS multicast stays in
the namespace, and nothing any test sends reaches the machine's real network. Emulators listen on further venue
addresses (``addresses=`` or ``ip addr add 10.99.0.N/24 dev lo`` in the script).

Needs root (or CAP_SYS_ADMIN), ``unshare`` (util-linux) and ``ip`` (iproute2): ``scripts/setup --dev`` installs the
tools; where a namespace cannot be made the test fails and says why (it is never skipped: the tests that need it
cover the default paths a volunteer runs).

The script runs under ``sh -eu`` in the repository with the virtualenv's ``bin`` first on PATH (``badge-agent``,
``python``), and may use these functions:

``spawn LOG COMMAND...``
    start COMMAND in the background, its output in LOG; it is killed when the script ends.
``await_line LOG TEXT``
    wait (at most 30 s) until LOG holds TEXT; otherwise print LOG and fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The venue network inside every namespace: the machine's own address in it, and its /24.
VENUE_ADDRESS = "10.99.0.1"
VENUE_NETWORK = "10.99.0.0/24"
#: Set inside the namespace, for code that must know it runs there (see conftest.py's ``netns`` marker).
INSIDE_ENV = "BADGE_AGENT_TEST_NETNS"

_PRELUDE = """\
ip link set lo up
ip addr add {address}/24 dev lo
ip route add default dev lo
for a in {addresses}; do ip addr add "$a/24" dev lo; done
spawned=""
trap 'for p in $spawned; do kill "$p" 2>/dev/null || true; done; wait' EXIT
spawn() {{ log=$1; shift; "$@" >"$log" 2>&1 & spawned="$spawned $!"; }}
await_line() {{
  n=0
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    n=$((n + 1))
    if [ "$n" -gt 300 ]; then echo "never saw '$2' in $1:" >&2; cat "$1" >&2; exit 1; fi
    sleep 0.1
  done
}}
"""
_SBIN = "/usr/local/sbin:/usr/sbin:/sbin"


def _tool_path() -> str:
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", ""), _SBIN])


def require_netns() -> None:
    """Fail the calling test, saying what is missing, unless this machine can make a network namespace."""
    missing = [tool for tool in ("unshare", "ip") if shutil.which(tool, path=_tool_path()) is None]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not found: the network-namespace tests need util-linux (unshare) and iproute2"
            " (ip); scripts/setup --dev installs them",
            pytrace=False,
        )
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, env={"PATH": _tool_path()})
    if probe.returncode != 0:
        pytest.fail(
            f"cannot create a network namespace ({probe.stderr.strip()}): these tests run as root (as CI does),"
            " so that no test packet reaches the machine's real network",
            pytrace=False,
        )


def run_in_netns(
    script: str,
    *,
    addresses: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (sh) in a fresh network namespace with ``addresses`` (10.99.0.N) added to its ``lo``.

    Returns the finished process (stdout and stderr as text; the caller checks ``returncode``). The namespace, and
    every process the script spawned, is gone when this returns; on ``timeout`` the whole process group is killed.
    """
    require_netns()
    prelude = _PRELUDE.format(address=VENUE_ADDRESS, addresses=" ".join(addresses))
    proc = subprocess.Popen(
        ["unshare", "-n", "sh", "-euc", prelude + script],
        cwd=ROOT,
        env={**os.environ, **(env or {}), "PATH": _tool_path(), INSIDE_ENV: "1", "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the network-namespace script ran over {timeout} s:\n{out}\n{err}", pytrace=False)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def inside_netns() -> bool:
    """True in a process started by :func:`run_in_netns`."""
    return os.environ.get(INSIDE_ENV) == "1"
