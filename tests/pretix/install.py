"""A real pretix for the tests: installed from the package index into its own virtualenv, with a migrated database.

Both are built once and cached under ``~/.cache/badge-agent/pretix-<version>-py<X.Y>/`` (``$XDG_CACHE_HOME`` is
honoured; pretix's dependencies are pinned in constraints.txt beside this file, and a change there rebuilds it):
the virtualenv (about 600 MB, 1-2 minutes to install) and ``template.sqlite3``, the database after
``migrate`` (about a minute of CPU). Each test session copies the template, so no test sees another's data. A file
lock makes concurrent sessions wait for one build instead of racing; a build goes to a temporary folder that is
renamed into place only when complete, so an interrupted build is never mistaken for a cache.

Run ``python -m tests.pretix.install`` to build the cache ahead of the tests (scripts/test does); it prints how long
each step took.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The pretix release the tests run against. Changing it builds a new cache next to the old one.
PRETIX_VERSION = "2026.8.0"

#: pretix's own dependencies at the versions the tests passed with; a change rebuilds the cache.
CONSTRAINTS = Path(__file__).with_name("constraints.txt")


def build_key() -> str:
    """What a cache was built from: the pretix version and the pinned dependencies."""
    pins = CONSTRAINTS.read_bytes() if CONSTRAINTS.is_file() else b""
    return f"{PRETIX_VERSION} {hashlib.sha256(pins).hexdigest()[:16]}"


def cache_root() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "badge-agent"


@dataclass(frozen=True)
class PretixInstall:
    """A built cache: the virtualenv's python and the migrated template database."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "venv" / "bin" / "python"

    @property
    def template_db(self) -> Path:
        return self.root / "template.sqlite3"

    def usable(self) -> bool:
        """The cache is whole and its interpreter still runs (a removed base Python breaks a virtualenv)."""
        ready = self.root / "READY"
        if not ready.is_file() or ready.read_text(encoding="utf-8").strip() != build_key():
            return False
        if not self.template_db.is_file():
            return False
        probe = subprocess.run(
            [str(self.python), "-c", "import pretix; print(pretix.__version__)"],
            capture_output=True,
            text=True,
            check=False,
        )
        return probe.returncode == 0 and probe.stdout.strip() == PRETIX_VERSION


def install_dir(version: str = PRETIX_VERSION) -> Path:
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    return cache_root() / f"pretix-{version}-py{py}"


def write_config(path: Path, data_dir: Path, db: Path, port: int, debug: bool = True) -> None:
    """A pretix.cfg for a private instance: SQLite, its own data folder, the URL it is reached at.

    debug is on for the tests because pretix serves uploaded files (a badge layout's background PDF) itself only in
    debug mode; in production a web server in front of it does. Mail goes to port 9 on loopback (discard: nothing
    listens), so nothing a test triggers can send an e-mail anywhere.
    """
    path.write_text(
        "[pretix]\n"
        "instance_name=badge-agent tests\n"
        f"url=http://127.0.0.1:{port}\n"
        f"datadir={data_dir}\n"
        "[database]\n"
        "backend=sqlite3\n"
        f"name={db}\n"
        "[django]\n"
        f"debug={'on' if debug else 'off'}\n"
        "[mail]\n"
        "host=127.0.0.1\n"
        "port=9\n",
        encoding="utf-8",
    )


def pretix_env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PRETIX_", "PYTHON"))}
    env["PRETIX_CONFIG_FILE"] = str(config)
    env["DJANGO_SETTINGS_MODULE"] = "pretix.settings"
    return env


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(step: str, argv: list[str], log: Path, env: dict[str, str] | None = None) -> float:
    started = time.monotonic()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise RuntimeError(f"building the pretix test server failed at {step} (log: {log}):\n{tail}")
    return time.monotonic() - started


def build(target: Path, report: bool = False) -> dict[str, float]:
    """Install pretix and migrate a template database into ``target`` (through a temporary folder).

    Returns the seconds each step took.
    """
    work = target.with_name(f"{target.name}.building-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "build.log"
    times: dict[str, float] = {}
    venv = work / "venv"
    times["virtualenv"] = _run("venv", [sys.executable, "-m", "venv", str(venv)], log)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    constraints = ["-c", str(CONSTRAINTS)] if CONSTRAINTS.is_file() else []
    times["pip install pretix"] = _run("pip install", [*pip, *constraints, f"pretix=={PRETIX_VERSION}"], log)
    data = work / "migrate-data"
    data.mkdir()
    config = work / "pretix.cfg"
    write_config(config, data, work / "template.sqlite3", port=9)
    migrate = [str(venv / "bin" / "python"), "-m", "pretix", "migrate", "--noinput"]
    times["migrate"] = _run("migrate", migrate, log, env=pretix_env(config))
    shutil.rmtree(data)
    config.unlink()
    (work / "READY").write_text(build_key() + "\n", encoding="utf-8")
    # A virtualenv records its own path in its scripts; `python -m` is all we use, which does not read them, and
    # bin/python is a symlink to the base interpreter, so renaming the folder leaves it working.
    shutil.rmtree(target, ignore_errors=True)
    work.rename(target)
    if report:
        for step, seconds in times.items():
            print(f"  {step:<20} {seconds:6.1f} s")
    return times


def ensure_installed(report: bool = False) -> PretixInstall:
    """The cached pretix, built first if it is missing or broken (one builder at a time)."""
    target = install_dir()
    install = PretixInstall(target)
    if install.usable():
        return install
    with _locked(target.with_name(target.name + ".lock")):
        if not install.usable():  # another session may have built it while we waited
            if report:
                print(f"building pretix {PRETIX_VERSION} for the tests in {target}")
            build(target, report=report)
    return install


def main() -> None:
    started = time.monotonic()
    install = ensure_installed(report=True)
    print(f"pretix {PRETIX_VERSION} ready in {install.root} ({time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    main()
