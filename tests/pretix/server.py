"""A private pretix server for one test session: a copy of the migrated template database, served on loopback.

Served as pretix runs at a venue, not as a developer's ``runserver``: several processes (runtime/serve.py) and
SQLite in WAL mode with writers that wait for each other (runtime/pretix_test_settings.py), so that requests side by
side are answered side by side (as far as the machine's cores allow) instead of failing with "database is locked";
the query planner's statistics are kept current as a production database keeps them (runtime/serve.py).

Data is written through pretix's own models by ``pretix_data.py`` run in pretix's virtualenv (seeding, and changes a
test makes mid-test: a name changed, an order placed or cancelled, a token revoked). The server can be stopped and
started again on the same port and data (pretix unreachable, then back).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from cli.redis_server import free_port as free_loopback_port
from tests.pretix.install import PretixInstall, pretix_env, write_config

DATA_SCRIPT = Path(__file__).with_name("pretix_data.py")
#: pretix's settings for the server and the data process, and the server itself; run by pretix's interpreter.
RUNTIME = Path(__file__).with_name("runtime")
SERVE_SCRIPT = RUNTIME / "serve.py"
#: Server processes: more than one answers requests side by side (one Python process uses one core).
WORKERS = 3


def server_env(config: Path) -> dict[str, str]:
    """pretix's environment with the test settings (pretix's own, SQLite tuned) on its path."""
    env = pretix_env(config)
    env["DJANGO_SETTINGS_MODULE"] = "pretix_test_settings"
    env["PYTHONPATH"] = str(RUNTIME)
    return env


def use_wal(db: Path) -> None:
    """Switch a database file to WAL mode (recorded in the file): readers no longer wait for a writer."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA journal_mode=WAL")


class PretixServer:
    """One pretix instance: its data folder, config, database and (while started) its server processes."""

    def __init__(self, install: PretixInstall, folder: Path, copy_of: Path | None = None, debug: bool = True) -> None:
        """A new instance in ``folder``: a fresh migrated database, or a copy of another instance's data folder
        (its database and uploaded files). ``debug`` off: as pretix runs in production (it then serves no
        uploaded files itself)."""
        self.install = install
        self.folder = folder
        self.port = free_loopback_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = folder / "data"
        self.db = self.data / "db.sqlite3"
        if copy_of is not None:
            shutil.copytree(copy_of, self.data, ignore=shutil.ignore_patterns("logs"))
        else:
            self.data.mkdir(parents=True)
            shutil.copyfile(install.template_db, self.db)
        use_wal(self.db)
        self.config = folder / "pretix.cfg"
        write_config(self.config, self.data, self.db, self.port, debug)
        self.log = folder / "server.log"
        self.data_log = folder / "pretix_data.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._data: subprocess.Popen[bytes] | None = None

    def run_data(self, *args: str) -> Any:
        """Run a ``pretix_data.py`` command against this instance's database; returns its answer.

        One ``pretix_data.py serve`` process per instance takes the commands (pretix takes seconds to load).
        """
        data = self._data
        if data is None or data.poll() is not None:
            with self.data_log.open("ab") as log:
                data = self._data = subprocess.Popen(
                    [str(self.install.python), str(DATA_SCRIPT), "serve"],
                    env=server_env(self.config),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                )
        assert data.stdin is not None and data.stdout is not None
        data.stdin.write(json.dumps(list(args)).encode() + b"\n")
        data.stdin.flush()
        line = data.stdout.readline()
        if not line:
            tail = self.data_log.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise RuntimeError(f"pretix_data.py stopped at {' '.join(args)}:\n{tail}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"pretix_data.py {' '.join(args)} failed:\n{answer['error'][-3000:]}")
        return answer["ok"]

    def start(self, timeout: float = 60.0) -> None:
        """Start the server on loopback and wait until its API answers."""
        if self._process is not None:
            return
        argv = [str(self.install.python), str(SERVE_SCRIPT), "127.0.0.1", str(self.port), str(WORKERS)]
        with self.log.open("ab") as log:
            self._process = subprocess.Popen(argv, env=server_env(self.config), stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                tail = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
                self._process = None
                raise RuntimeError(f"pretix server exited at start:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v1/", timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # any HTTP answer (401 without a token) means it is serving
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"pretix server did not answer on {self.url} within {timeout:g} s (log: {self.log})")

    def stop(self) -> None:
        """Stop the server (its port then refuses connections, as an unreachable pretix does)."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the server and the data process."""
        self.stop()
        data, self._data = self._data, None
        if data is not None:
            assert data.stdin is not None
            data.stdin.close()  # serve() ends at the end of its input
            try:
                data.wait(timeout=10)
            except subprocess.TimeoutExpired:
                data.kill()
                data.wait()

    def requests_to(self, path: str) -> list[str]:
        """The request lines the server logged so far whose URL contains ``path``."""
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return [line for line in text.splitlines() if '"GET ' in line and path in line]

    @property
    def pid(self) -> int | None:
        """The server's first process (its workers are its children), while started."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None
