"""``badge-agent setup``: one printer's config written, checked against Redis and the printer, and test-printed.

Interactive by default (each value prompted with a default); ``--yes`` takes every value from the flags. Redis is
one URL, or a Sentinel-managed master (``--sentinel`` addresses and ``--sentinel-master``), written in the
``redis.sentinel`` section (protocol/redis_config.py, ``SentinelConfig``).
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import os
import pwd
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import yaml

import agent
from agent.config import AgentConfig, load_config
from cli.main import EXIT_PRINTER, EXIT_SERVICE, EXIT_UNAVAILABLE, fail
from core.errors import EXIT_CONFIG, ConfigError
from core.settings import split_host_port

if TYPE_CHECKING:
    from drivers.base import Driver
    from drivers.config import DriverConfig

CONFIG_DIR = Path("/etc/badge-agent")
#: Where the unit keeps its journals (``StateDirectory=badge-agent`` in systemd/badge-agent@.service).
STATE_DIR = Path("/var/lib/badge-agent")
SERVICE_USER = SERVICE_GROUP = "badge-agent"
UNIT = "badge-agent@.service"
#: Where systemd looks for a unit an administrator installed (systemd.unit(5), system unit search path).
UNIT_DIRS = (
    Path("/etc/systemd/system"),
    Path("/run/systemd/system"),
    Path("/usr/local/lib/systemd/system"),
    Path("/usr/lib/systemd/system"),
    Path("/lib/systemd/system"),
)
SYSTEMCTL = "systemctl"
#: The first agent's /healthz + /metrics port; each further agent on the machine takes the next free one.
FIRST_HTTP_PORT = 9731


def _driver(language: str, host: str | None, usb: str | None, serial: str | None, model: str | None) -> dict[str, Any]:
    driver: dict[str, Any] = {"language": language}
    if host:
        name, _, port = host.partition(":")
        driver.update(transport="tcp", host=name, port=int(port) if port.isdigit() else 9100)
    elif usb:
        vendor, _, product = usb.partition(":")
        driver.update(transport="usb", vendor_id=vendor, product_id=product)
    else:
        driver.update(transport="serial", device=serial)
    if model:
        driver["model"] = model
    return driver


def _redis_section(opts: dict[str, Any], ask: bool) -> dict[str, Any]:
    """The ``redis:`` section: a URL, or the sentinels, their master's name and their password file."""
    if opts["redis_url"] and opts["sentinels"]:
        fail("give --redis URL or --sentinel HOST:PORT, not both")
    if not opts["redis_url"] and not opts["sentinels"]:
        if not ask:
            fail("--yes needs --redis URL (or --sentinel HOST:PORT and --sentinel-master NAME)")
        answer = click.prompt(
            "Redis URL, or Sentinel addresses (HOST:PORT,HOST:PORT,...)", default="redis://127.0.0.1:6379/0"
        ).strip()
        if "://" in answer:
            opts["redis_url"] = answer
        else:
            opts["sentinels"] = tuple(a.strip() for a in answer.split(",") if a.strip())
    if not opts["sentinels"] and (opts["sentinel_master"] or opts["sentinel_password_file"]):
        fail("--sentinel-master and --sentinel-password-file go with --sentinel HOST:PORT")
    redis: dict[str, Any] = {}
    if opts["sentinels"]:
        if not opts["sentinel_master"]:
            if not ask:
                fail("--sentinel needs --sentinel-master NAME (the master name in the sentinels' sentinel.conf)")
            opts["sentinel_master"] = click.prompt("Sentinel master name (sentinel monitor NAME ...)")
        if ask and not opts["sentinel_password_file"]:
            opts["sentinel_password_file"] = click.prompt(
                "Sentinels' password file (empty: none)", default="", show_default=False
            )
        sentinel: dict[str, Any] = {"master": opts["sentinel_master"], "nodes": list(opts["sentinels"])}
        if opts["sentinel_password_file"]:
            sentinel["password_file"] = opts["sentinel_password_file"]
        redis["sentinel"] = sentinel
    else:
        redis["url"] = opts["redis_url"]
    if ask and not opts["username"] and not opts["password_file"]:
        opts["username"] = click.prompt(
            "Redis user name (badge-agent acl --printer NAME made it; empty: none)", default="", show_default=False
        ).strip()
        if opts["username"]:
            opts["password"] = click.prompt("Redis password", hide_input=True)
    if opts["username"]:
        redis["username"] = opts["username"]
    if opts["password_file"]:
        redis["password_file"] = opts["password_file"]
    return redis


def _detected(
    n: int, scanners: Any, timeout: float, mdns: bool, serial: str | None = None, host: str | None = None
) -> dict[str, Any]:
    from cli.commands.detect import MDNS_WINDOW, _target, describe, scan

    # A port named with --serial is counted as detect --serial counts it (the only kind asked whether it is TSPL), a
    # host named with --host as detect --host counts it (asked that host alone, TSPL and DYMO included).
    named = (serial,) if serial else ()
    targets = [_target(host)] if host else []
    found = scan(scanners, targets, devices=named, timeout=timeout, mdns_window=MDNS_WINDOW if mdns else 0.0)
    if not 0 < n <= len(found):
        fail(f"--detected {n}: detect found {len(found)} printer(s); run badge-agent detect to list them")
    click.echo(f"printer {n}: {describe(found[n - 1])}")
    return dict(found[n - 1].driver)


@click.command()
@click.option("--yes", is_flag=True, help="Take every value from the flags; ask nothing.")
@click.option("--venue", help="Venue name (as in Redis keys), e.g. expo-2026.")
@click.option("--name", help="This printer's name, e.g. hall-a-1.")
@click.option("--location", help="Where the printer stands, for staff.")
@click.option("--redis", "redis_url", help="Redis URL, e.g. redis://10.0.0.2:6379/0.")
@click.option("--username", help="The agent's Redis user name (badge-agent acl makes one per printer).")
@click.option("--password-file", type=click.Path(dir_okay=False), help="File holding the Redis password.")
@click.option(
    "--sentinel", "sentinels", multiple=True, metavar="HOST:PORT", help="A Redis Sentinel, instead of --redis (repeat)."
)
@click.option("--sentinel-master", help="The master's service name the sentinels monitor, e.g. venue.")
@click.option(
    "--sentinel-password-file", type=click.Path(dir_okay=False), help="File holding the sentinels' own password."
)
@click.option(
    "--language",
    type=click.Choice(["zpl", "brother_ql", "escpos", "dymo", "tspl"]),
    help="The printer's language (default: what a network printer says it speaks).",
)
@click.option("--model", help="Brother QL (e.g. QL-700) or DYMO (e.g. LabelWriter 450) model, as detect shows it.")
@click.option("--host", help="Network printer HOST[:PORT].")
@click.option("--usb", help="USB printer VENDOR:PRODUCT as lsusb shows it, e.g. 0a5f:0164.")
@click.option("--serial", help="Serial printer device, e.g. /dev/ttyUSB0.")
@click.option("--detected", type=int, help="The Nth printer `badge-agent detect` lists.")
@click.option("--no-mdns", is_flag=True, help="With --detected: count as `badge-agent detect --no-mdns` does.")
@click.option("--out", type=click.Path(dir_okay=False), help="Write here instead of /etc/badge-agent/NAME.yaml.")
@click.option("--force", is_flag=True, help="Overwrite an existing config.")
@click.option("--no-test-print", is_flag=True, help="Skip the test badge.")
@click.option("--no-start", is_flag=True, help="As root: write and test the config, but do not start badge-agent@NAME.")
@click.pass_context
def setup(ctx: click.Context, /, **opts: Any) -> None:
    """Write, check and test-print one printer's config; as root, also start badge-agent@NAME."""
    ask = not opts["yes"]
    if opts["no_mdns"] and not opts["detected"]:
        fail("--no-mdns goes with --detected N")
    starts = os.geteuid() == 0 and not opts["out"] and not opts["no_start"] and shutil.which(SYSTEMCTL) is not None
    if starts and not unit_installed():
        # Said before anything is asked, written or printed: the volunteer installs the unit and runs this again.
        fail(
            f"the systemd unit {UNIT} is not installed, so the agent could not be started. Install it first: "
            f"{_install_hint()} (the unit, the badge-agent user, /opt/badge-agent), then run this setup again; "
            "or add --no-start to write and test the config only",
            EXIT_SERVICE,
        )
    for key, question in (("venue", "Venue"), ("name", "Printer name"), ("location", "Location")):
        if not opts[key]:
            if not ask:
                fail(f"--yes needs --{key}")
            opts[key] = click.prompt(question)
    redis = _redis_section(opts, ask)
    if opts["detected"]:
        from cli.commands.detect import Scanners

        scanners = ctx.find_object(Scanners) or Scanners()
        driver = _detected(opts["detected"], scanners, 0.5, not opts["no_mdns"], opts["serial"], opts["host"])
    else:
        if ask and not (opts["host"] or opts["usb"] or opts["serial"]):
            opts["host"] = click.prompt("Printer address (HOST[:PORT])")
        if len([x for x in (opts["host"], opts["usb"], opts["serial"]) if x]) != 1:
            fail("name the printer once: --host HOST[:PORT], --usb VENDOR:PRODUCT or --serial DEVICE (or --detected N)")
        language = opts["language"] or _language(opts, ask)
        driver = _driver(language, opts["host"], opts["usb"], opts["serial"], opts["model"])
    name = opts["name"]
    out = Path(opts["out"]) if opts["out"] else CONFIG_DIR / f"{name}.yaml"
    if out.exists() and not opts["force"]:
        fail(f"{out} exists; --force overwrites it")
    journal = STATE_DIR / f"{name}.journal" if not opts["out"] else out.with_suffix(".journal")
    config = {
        "venue": opts["venue"],
        "printer": {"name": name, "location": opts["location"], "driver": driver},
        "redis": redis,
        "http": {"listen": _http_listen(out)},
        "journal": str(journal),
    }
    _journal_dir(journal.parent)
    password_file = _password_file(opts, out, redis)
    earlier_password = password_file.read_bytes() if password_file is not None and password_file.exists() else None
    # Checked under a temporary name first, Redis and the printer included: nothing is written in place until every
    # check passed, so a wrong value (or login) never replaces a working config, and a retry needs no --force.
    draft = out.with_name(out.name + ".new")
    try:
        if password_file is not None:
            _write(password_file, opts["password"] + "\n")
        _write(draft, yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
        try:
            loaded = load_config(draft)
        except ConfigError as exc:
            fail(exc.render(), EXIT_CONFIG)
        _check(loaded, out, opts["no_test_print"], _driver_maker(ctx))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            draft.unlink()
        if password_file is not None and earlier_password is not None:
            password_file.write_bytes(earlier_password)
        elif password_file is not None:
            password_file.unlink(missing_ok=True)
        raise
    draft.replace(out)
    click.echo(f"wrote {out}" + (f" and {password_file}" if password_file is not None else ""))
    unit = f"badge-agent@{name}"
    if starts:
        # The unit is Type=notify and reports "started" only once Redis acknowledged the agent's first heartbeat,
        # so this returns when the agent is really running (or fails, naming the unit).
        try:
            subprocess.run([SYSTEMCTL, "enable", "--now", unit], check=True, timeout=120)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            fail(
                f"{unit} did not start ({exc}); {out} is written and tested. Why: systemctl status {unit} and "
                f"journalctl -u {unit} -n 50",
                EXIT_SERVICE,
            )
        click.echo(f"{unit} started; journalctl -u {unit} -f")
    elif os.geteuid() == 0 and not opts["out"] and opts["no_start"]:
        first = "" if unit_installed() else f"install the unit ({_install_hint()}), then "
        click.echo(f"not started (--no-start); to start it: {first}sudo systemctl enable --now {unit}")
    else:
        click.echo(f"run it: badge-agent run -c {out}")


def _driver_maker(ctx: click.Context) -> Callable[[DriverConfig, str], Driver]:
    """How the printer's driver is built: as the agent builds it, but a USB printer through the USB backend detect
    was given (a test's emulated device), so setup checks and test-prints the printer detect listed."""
    from cli.commands.detect import Scanners
    from drivers import build_driver, build_language_driver

    backend = getattr(ctx.find_object(Scanners), "usb_backend", None)
    if backend is None:
        return build_driver

    def make(config: DriverConfig, name: str) -> Driver:
        if config.transport == "usb":
            return build_language_driver(config, name, usb_backend=backend)
        return build_driver(config, name)

    return make


def _check(
    loaded: AgentConfig, out: Path, no_test_print: bool, make_driver: Callable[[DriverConfig, str], Driver]
) -> None:
    """Redis takes the login, the printer answers, and (unless skipped) a test badge prints: else exit naming why."""
    from cli.commands.connect import check_printer, check_redis, confirmed_by_line

    redis_failure = asyncio.run(check_redis(loaded))
    if redis_failure:
        fail(f"{out}: {redis_failure}; nothing written", EXIT_UNAVAILABLE)
    printer_failure, confirmed_by = asyncio.run(check_printer(loaded, make_driver))
    if printer_failure:
        fail(f"{out}: {printer_failure}; nothing written", EXIT_PRINTER)
    click.echo("redis and printer answer")
    click.echo(confirmed_by_line(confirmed_by))
    if no_test_print:
        return
    from cli.commands.printing import test_print_badge

    driver_obj = make_driver(loaded.printer.driver, loaded.printer.name)
    outcome, reason = asyncio.run(test_print_badge(loaded, driver_obj, None, click.echo))
    click.echo(f"test badge: {outcome.value} ({reason})")
    if outcome.value != "printed":
        fail(f"{out}: the test badge was not confirmed printed; nothing written", EXIT_PRINTER)


def _password_file(opts: dict[str, Any], out: Path, redis: dict[str, Any]) -> Path | None:
    """Where the password typed at the prompt goes, beside the config (written with the config's mode and group),
    named in the ``redis`` section; None when none was typed."""
    if not opts.get("password"):
        return None
    path = out.with_name(f"{out.stem}.redis-password")
    redis["password_file"] = str(path)
    return path


def unit_installed() -> bool:
    """True when systemd would find the agent's unit template (systemd/install.sh puts it in /etc/systemd/system)."""
    return any((folder / UNIT).is_file() for folder in UNIT_DIRS)


def _install_hint() -> str:
    """The command that installs the unit: this checkout's install.sh when badge-agent runs from one."""
    script = Path(agent.__file__).resolve().parent.parent / "systemd" / "install.sh"
    return f"sudo {script}" if script.is_file() else "sudo systemd/install.sh in a badge-agent checkout"


def _language(opts: dict[str, Any], ask: bool) -> str:
    """The printer's language: what a network printer says it speaks, else asked (interactive) or refused."""
    choices = ["zpl", "brother_ql", "escpos", "dymo", "tspl"]
    where = opts["host"] or opts["usb"] or opts["serial"]
    if opts["host"]:
        from detect.network import RAW_PORT, probe_hosts

        host, _, port = opts["host"].partition(":")
        answered = asyncio.run(probe_hosts([(host, int(port) if port.isdigit() else RAW_PORT)], timeout=1.0))
        if answered:
            told = answered[0]
            click.echo(
                f"the printer at {opts['host']} speaks {told.language}" + (f" ({told.model})" if told.model else "")
            )
            if not opts["model"] and told.driver.get("model"):
                opts["model"] = told.driver["model"]
            return told.language
    if not ask:
        fail(
            f"--language: the printer at {where} did not say which language it speaks; name it: --language "
            + "|".join(choices)
        )
    answer: str = click.prompt(f"Printer language (the printer at {where} did not say)", type=click.Choice(choices))
    return answer


def _http_listen(out: Path) -> str:
    """A /healthz + /metrics address no other agent's config names and no other process holds.

    A port held by someone else would have /healthz answered by them. A config being rewritten keeps its own port
    (its agent may be the one holding it).
    """
    own = _listen_port(out)
    if own is not None:
        if (problem := _bind_problem(own)) is not None:
            # Kept all the same: the holder is most likely this printer's own agent, still running.
            click.echo(
                f"{problem} (kept from {out}): fine if that is this printer's agent, badge-agent@{out.stem}, "
                f"still running; otherwise set http.listen in {out} to a free port"
            )
        return f"127.0.0.1:{own}"
    named = {port for path in out.parent.glob("*.yaml") if path != out and (port := _listen_port(path)) is not None}
    for port in range(FIRST_HTTP_PORT, FIRST_HTTP_PORT + 100):
        if port in named:
            continue
        if (problem := _bind_problem(port)) is None:
            return f"127.0.0.1:{port}"
        click.echo(f"{problem}; trying the next port")
    fail(f"no free port for /healthz from {FIRST_HTTP_PORT} to {FIRST_HTTP_PORT + 99}: set http.listen in {out}")
    raise AssertionError("unreachable")


def _listen_port(path: Path) -> int | None:
    """The port of ``http.listen`` in an existing agent config, if it names one."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return split_host_port(str(data["http"]["listen"]))[1]
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError):
        return None


def _bind_problem(port: int) -> str | None:
    """Why the agent could not listen on 127.0.0.1:``port``, in the words ``run`` logs; None when it could."""
    from agent.http_port import bind, bind_problem

    listen = f"127.0.0.1:{port}"
    try:
        sockets = bind(listen)
    except OSError as exc:
        return bind_problem(listen, exc)
    for sock in sockets:
        sock.close()
    return None


def _journal_dir(folder: Path) -> None:
    """The journal's directory, made as the unit makes its StateDirectory: 0750, owned by the service user."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(mode=0o750, parents=True)
    except OSError as exc:
        fail(f"journal: cannot create {folder}: {exc.strerror}; run as root (sudo) or use --out FILE")
    if os.geteuid() == 0:
        with contextlib.suppress(KeyError):  # no service user (systemd/install.sh not run): root's 0750 is safe
            user = pwd.getpwnam(SERVICE_USER)
            os.chown(folder, user.pw_uid, user.pw_gid)
    click.echo(f"created {folder} for the journal")


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror}; run as root (sudo) or write elsewhere with --out FILE")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o640)
    if os.geteuid() == 0:
        # No service group on this machine: root-only 0640 is still safe.
        with contextlib.suppress(KeyError):
            os.chown(path, 0, grp.getgrnam(SERVICE_GROUP).gr_gid)
