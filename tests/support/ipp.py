"""Real IPP peers for the tests: ippeveprinter (CUPS's IPP Everywhere printer) and a cupsd run without root.

ippeveprinter announces itself over DNS-SD, so it runs beside a private D-Bus system bus and avahi-daemon, both on
files in the test's directory and on loopback only. Its job command (``-c``) is a shell script that keeps a copy
of every document (``documents``), checks a PWG raster with ippevepcl (CUPS's own raster reader: a document it
cannot read aborts the job), and then runs ``behaviour.sh``, which a test rewrites to inject a fault:
:data:`PRINTS` (one impression, exit 0), :data:`FAILS` (exit 1: ``aborted``), :data:`RUNS_OUT` (prints, then
``STATE: +media-empty``), :data:`HANGS` (``media-needed``, never finishes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

PRINTS = 'echo "ATTR: job-impressions-completed=1" >&2\nexit 0\n'
FAILS = 'echo "ERROR: the test says this job fails" >&2\nexit 1\n'
RUNS_OUT = 'echo "ATTR: job-impressions-completed=1" >&2\necho "STATE: +media-empty" >&2\nexit 0\n'
#: Waits for paper until the printer reaches a stop point (the test calls :meth:`IppEvePrinter.stop_point`; a real
#: printer gets there by itself after Cancel-Job, ippeveprinter only when its command ends) or ippeveprinter exits.
HANGS = (
    'echo "STATE: +media-needed" >&2\n'
    'while [ ! -e "$DIR/stop-point" ] && kill -0 $PPID 2>/dev/null; do\n'
    '  echo "INFO: waiting for paper" >&2; sleep 0.1\n'
    "done\n"
    "exit 1\n"
)
#: Completed, but the printer counts no impression (a command that says nothing about pages).
COUNTS_NOTHING = 'echo "ATTR: job-impressions-completed=0" >&2\nexit 0\n'

_DBUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={socket}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/>
<allow receive_sender="*"/></policy></busconfig>
"""
_AVAHI_CONF = """[server]
use-ipv4=yes
use-ipv6=yes
allow-interfaces=lo
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[publish]
publish-workstation=no
publish-hinfo=no
[wide-area]
enable-wide-area=no
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def dns_sd(directory: Path) -> Iterator[dict[str, str]]:
    """A private D-Bus system bus and avahi-daemon on loopback; yields the environment that reaches them."""
    directory.mkdir(parents=True, exist_ok=True)
    bus = directory / "dbus.sock"
    (directory / "dbus.conf").write_text(_DBUS_CONF.format(socket=bus))
    (directory / "avahi.conf").write_text(_AVAHI_CONF)
    started = subprocess.run(
        ["dbus-daemon", "--config-file", str(directory / "dbus.conf"), "--fork", "--print-pid"],
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    )
    dbus_pid = int(started.stdout.split()[0])
    env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={bus}"}
    avahi = subprocess.Popen(
        ["avahi-daemon", "--no-drop-root", "--no-chroot", "--no-rlimits", "-f", str(directory / "avahi.conf")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(directory / "avahi.log", "wb"),  # noqa: SIM115 (closed with the process)
    )
    try:
        yield env
    finally:
        stop(avahi)
        with contextlib.suppress(ProcessLookupError):
            os.kill(dbus_pid, signal.SIGTERM)


@dataclass
class IppEvePrinter:
    directory: Path
    port: int
    process: subprocess.Popen[bytes]

    @property
    def uri(self) -> str:
        return f"ipp://localhost:{self.port}/ipp/print"

    @property
    def documents(self) -> Path:
        return self.directory / "documents"

    def behave(self, script: str) -> None:
        """What the job command does after keeping the document (see the module docstring)."""
        path = self.directory / "behaviour.sh"
        path.write_text(script)

    def stop_point(self) -> None:
        """Let a :data:`HANGS` job's command end, as a printer reaches the point where a cancelled job stops."""
        (self.directory / "stop-point").touch()

    def printed(self) -> list[Path]:
        return sorted(p for p in self.documents.iterdir() if not p.name.endswith(".tmp"))


_COMMAND = """#!/bin/sh
# ippeveprinter's job command: keep the document, have CUPS read a raster back, then do what the test says.
kept="{dir}/documents/$IPP_JOB_ID-$IPP_JOB_NAME"
cp "$1" "$kept.tmp" && mv "$kept.tmp" "$kept"
if [ "$CONTENT_TYPE" = image/pwg-raster ] && ! /usr/sbin/ippevepcl "$1" > /dev/null 2> "{dir}/ippevepcl.log"; then
  echo "ERROR: ippevepcl cannot read the raster" >&2
  exit 2
fi
DIR="{dir}"
. "{dir}/behaviour.sh"
"""


@contextlib.contextmanager
def ippeveprinter(
    directory: Path,
    env: dict[str, str],
    formats: str = "image/pwg-raster,image/png",
    name: str = "Badges",
    extra: Sequence[str] = (),
) -> Iterator[IppEvePrinter]:
    """ippeveprinter on a free loopback port, as DESIGN's recipe runs it (``-n localhost``: it wants IPv6 too).
    ``extra``: more options (``-a attributes.conf``: the media, resolutions and formats it reports; ippeveprinter then
    takes no ``-f``, so ``formats`` must be "")."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "spool").mkdir(exist_ok=True)
    (directory / "documents").mkdir(exist_ok=True)
    command = directory / "print.sh"
    command.write_text(_COMMAND.format(dir=directory))
    command.chmod(0o755)
    (directory / "behaviour.sh").write_text(PRINTS)
    port = free_port()
    args = ["ippeveprinter", "-p", str(port), "-r", "off", "-n", "localhost", "-d", str(directory / "spool"), "-k"]
    args += [*(["-f", formats] if formats else []), "-c", str(command), *extra, name]
    log = open(directory / "ippeveprinter.log", "wb")  # noqa: SIM115 (closed after the process)
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc, "ippeveprinter")
        yield IppEvePrinter(directory, port, proc)
    finally:
        stop(proc)
        log.close()


# -- reading back what was printed -----------------------------------------------------------------------------


def _unpack_line(data: bytes, at: int, bytes_per_line: int, unit: int) -> tuple[bytes, int]:
    line = bytearray()
    while len(line) < bytes_per_line:
        code = data[at]
        at += 1
        assert code != 128, "the encoder never ends a line early"
        if code < 128:
            line += data[at : at + unit] * (code + 1)
            at += unit
        else:
            count = (257 - code) * unit
            line += data[at : at + count]
            at += count
    return bytes(line[:bytes_per_line]), at


def read_pwg(data: bytes) -> Image.Image:
    """The first page of a PWG raster document as a mode "L" image (0 = black), decoded independently of
    drivers/ipp/raster.py (from PWG 5102.4's layout)."""
    assert data[:4] == b"RaS2", data[:4]
    header = data[4 : 4 + 1796]
    width, height = int.from_bytes(header[372:376], "big"), int.from_bytes(header[376:380], "big")
    bits = int.from_bytes(header[388:392], "big")
    bytes_per_line = int.from_bytes(header[392:396], "big")
    space = int.from_bytes(header[400:404], "big")
    at, rows = 4 + 1796, bytearray()
    y = 0
    while y < height:
        repeat = data[at] + 1
        at += 1
        line, at = _unpack_line(data, at, bytes_per_line, 1)
        rows += line * repeat
        y += repeat
    if bits == 1:
        image = Image.frombytes("1", (width, height), bytes(rows))
        grey = image.convert("L")
        return grey.point(lambda v: 255 - v) if space == 3 else grey
    return Image.frombytes("L", (width, height), bytes(rows))


def read_document(path: Path) -> Image.Image:
    data = path.read_bytes()
    if data[:4] == b"RaS2":
        return read_pwg(data)
    with Image.open(path) as image:
        return image.convert("L")


def decode_qr(image: Image.Image) -> list[str]:
    import zxingcpp

    return [r.text for r in zxingcpp.read_barcodes(image)]


# -- a CUPS server of the test's own ---------------------------------------------------------------------------

_CUPSD_CONF = """Listen 127.0.0.1:{port}
LogLevel info
Browsing Off
DefaultAuthType None
WebInterface No
<Location />
  Order allow,deny
  Allow all
</Location>
<Policy default>
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>
"""
_CUPS_FILES_CONF = """ServerRoot {dir}
StateDir {dir}/state
RequestRoot {dir}/spool
TempDir {dir}/tmp
CacheDir {dir}/cache
Printcap {dir}/printcap
DataDir /usr/share/cups
ServerBin /usr/lib/cups
DocumentRoot /usr/share/cups/doc-root
AccessLog {dir}/log/access_log
ErrorLog {dir}/log/error_log
PageLog {dir}/log/page_log
FileDevice Yes
Sandboxing relaxed
User {user}
SystemGroup {group}
"""


@dataclass
class Cups:
    directory: Path
    port: int
    process: subprocess.Popen[bytes]

    @property
    def server(self) -> str:
        return f"127.0.0.1:{self.port}"

    def queue_uri(self, name: str) -> str:
        return f"ipp://127.0.0.1:{self.port}/printers/{name}"

    def add_queue(self, name: str, device_uri: str, *options: str) -> str:
        """``lpadmin -p NAME -E -v DEVICE-URI``: a raw queue (the agent draws the document); returns its URI."""
        subprocess.run(
            ["lpadmin", "-h", self.server, "-p", name, "-E", "-v", device_uri, *options],
            check=True,
            capture_output=True,
            timeout=30,
        )
        return self.queue_uri(name)


@contextlib.contextmanager
def cupsd(directory: Path) -> Iterator[Cups]:
    """cupsd without root, as CUPS's own test suite runs it: every file under ``directory``, loopback only. Run as
    root it will not run its backends as root: they run as ``lp``, which gets the directories it writes."""
    import grp
    import pwd

    for sub in ("state", "spool", "tmp", "cache", "log", "out"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    root = os.geteuid() == 0
    user = "lp" if root else pwd.getpwuid(os.geteuid()).pw_name
    group = grp.getgrgid(os.getegid()).gr_name  # the admin group: lpadmin as this user may change queues
    for sub in ("tmp", "out"):
        (directory / sub).chmod(0o1777)
    if root:
        # The backends (as lp) reach the spool and the file queue's output through pytest's 0700 directories.
        for parent in [directory, *directory.parents]:
            if parent == Path(tempfile.gettempdir()) or parent == parent.parent:
                break
            parent.chmod(parent.stat().st_mode | 0o011)
    port = free_port()
    (directory / "cupsd.conf").write_text(_CUPSD_CONF.format(port=port))
    (directory / "cups-files.conf").write_text(_CUPS_FILES_CONF.format(dir=directory, user=user, group=group))
    args = ["cupsd", "-f", "-c", str(directory / "cupsd.conf"), "-s", str(directory / "cups-files.conf")]
    log = open(directory / "cupsd.out", "wb")  # noqa: SIM115 (closed after the process)
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc, "cupsd")
        yield Cups(directory, port, proc)
    finally:
        stop(proc)
        log.close()
