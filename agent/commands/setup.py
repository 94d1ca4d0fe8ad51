"""``badge-agent setup``: one printer's config written, checked against Redis and the printer, and test-printed.

Interactive by default (each value prompted with a default); ``--yes`` takes every value from the flags. Redis is
one URL, or a Sentinel-managed master (``--sentinel`` addresses and ``--sentinel-master``), written in the
``redis.sentinel`` section agent/config.py reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import click
import yaml

from agent.cli import EXIT_UNAVAILABLE, fail
from agent.config import load_config
from agent.errors import EXIT_CONFIG, ConfigError

CONFIG_DIR = Path("/etc/badge-agent")
SERVICE_GROUP = "badge-agent"


def _driver(language: str, host: str | None, usb: str | None, serial: str | None, model: str | None) -> dict[str, Any]:
    chosen = [x for x in (host, usb, serial) if x]
    if len(chosen) != 1:
        fail("name the printer once: --host HOST[:PORT], --usb VENDOR:PRODUCT or --serial DEVICE (or --detected N)")
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
    if opts["password_file"]:
        redis["password_file"] = opts["password_file"]
    return redis


def _detected(n: int, scanners: Any, timeout: float, mdns: bool) -> dict[str, Any]:
    from agent.commands.detect import MDNS_WINDOW, describe, scan

    found = scan(scanners, [], timeout=timeout, mdns_window=MDNS_WINDOW if mdns else 0.0)
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
@click.option("--password-file", type=click.Path(dir_okay=False), help="File holding the Redis password.")
@click.option(
    "--sentinel", "sentinels", multiple=True, metavar="HOST:PORT", help="A Redis Sentinel, instead of --redis (repeat)."
)
@click.option("--sentinel-master", help="The master's service name the sentinels monitor, e.g. venue.")
@click.option(
    "--sentinel-password-file", type=click.Path(dir_okay=False), help="File holding the sentinels' own password."
)
@click.option("--language", type=click.Choice(["zpl", "brother_ql", "escpos"]), default="zpl", show_default=True)
@click.option("--model", help="Brother QL model (e.g. QL-700), as detect shows it.")
@click.option("--host", help="Network printer HOST[:PORT].")
@click.option("--usb", help="USB printer VENDOR:PRODUCT as lsusb shows it, e.g. 0a5f:0164.")
@click.option("--serial", help="Serial printer device, e.g. /dev/ttyUSB0.")
@click.option("--detected", type=int, help="The Nth printer `badge-agent detect` lists.")
@click.option("--no-mdns", is_flag=True, help="With --detected: count as `badge-agent detect --no-mdns` does.")
@click.option("--out", type=click.Path(dir_okay=False), help="Write here instead of /etc/badge-agent/NAME.yaml.")
@click.option("--force", is_flag=True, help="Overwrite an existing config.")
@click.option("--no-test-print", is_flag=True, help="Skip the test badge.")
@click.pass_context
def setup(ctx: click.Context, /, **opts: Any) -> None:
    """Write, check and test-print one printer's config; as root, also start badge-agent@NAME."""
    ask = not opts["yes"]
    if opts["no_mdns"] and not opts["detected"]:
        fail("--no-mdns goes with --detected N")
    for key, question in (("venue", "Venue"), ("name", "Printer name"), ("location", "Location")):
        if not opts[key]:
            if not ask:
                fail(f"--yes needs --{key}")
            opts[key] = click.prompt(question)
    redis = _redis_section(opts, ask)
    if opts["detected"]:
        from agent.commands.detect import Scanners

        driver = _detected(opts["detected"], ctx.find_object(Scanners) or Scanners(), 0.5, not opts["no_mdns"])
    else:
        if ask and not (opts["host"] or opts["usb"] or opts["serial"]):
            opts["host"] = click.prompt("Printer address (HOST[:PORT])")
        driver = _driver(opts["language"], opts["host"], opts["usb"], opts["serial"], opts["model"])
    name = opts["name"]
    out = Path(opts["out"]) if opts["out"] else CONFIG_DIR / f"{name}.yaml"
    if out.exists() and not opts["force"]:
        fail(f"{out} exists; --force overwrites it")
    config = {
        "venue": opts["venue"],
        "printer": {"name": name, "location": opts["location"], "driver": driver},
        "redis": redis,
        # Each agent on one machine needs its own /healthz + /metrics port: 9731, 9732, ... (as install.sh did).
        "http": {"listen": f"127.0.0.1:{9731 + len([p for p in out.parent.glob('*.yaml') if p != out])}"},
        "journal": f"/var/lib/badge-agent/{name}.journal" if not opts["out"] else str(out.with_suffix(".journal")),
    }
    # Validated under a temporary name first: a bad value never replaces a working config, even with --force.
    draft = out.with_name(out.name + ".new")
    _write(draft, yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    try:
        load_config(draft)
    except ConfigError as exc:
        draft.unlink()
        fail(exc.render(), EXIT_CONFIG)
    draft.replace(out)
    loaded = load_config(out)
    click.echo(f"wrote {out}")
    from agent.commands.connect import check_printer, check_redis

    for failure in (asyncio.run(check_redis(loaded)), asyncio.run(check_printer(loaded))):
        if failure:
            fail(f"{out}: {failure}", EXIT_UNAVAILABLE)
    click.echo("redis and printer answer")
    if not opts["no_test_print"]:
        from agent.commands.printing import print_test_badge
        from drivers import build_driver

        driver_obj = build_driver(loaded.printer.driver, loaded.printer.name)
        outcome, reason = asyncio.run(print_test_badge(loaded, driver_obj, None))
        click.echo(f"test badge: {outcome.value} ({reason})")
        if outcome.value != "printed":
            raise SystemExit(EXIT_UNAVAILABLE)
    if os.geteuid() == 0 and not opts["out"] and shutil.which("systemctl"):
        # The unit is Type=notify and reports "started" only once Redis acknowledged the agent's first heartbeat,
        # so this returns when the agent is really running (or fails, naming the unit).
        try:
            subprocess.run(["systemctl", "enable", "--now", f"badge-agent@{name}"], check=True, timeout=120)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            fail(f"badge-agent@{name} did not start ({exc}); journalctl -u badge-agent@{name}", EXIT_UNAVAILABLE)
        click.echo(f"badge-agent@{name} started; journalctl -u badge-agent@{name} -f")
    else:
        click.echo(f"run it: badge-agent run -c {out}")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o640)
    if os.geteuid() == 0:
        # No service group on this machine: root-only 0640 is still safe.
        with contextlib.suppress(KeyError):
            os.chown(path, 0, grp.getgrnam(SERVICE_GROUP).gr_gid)
