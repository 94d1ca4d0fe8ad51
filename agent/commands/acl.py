"""``badge-agent acl``: the least-privilege Redis user for one agent, or for a venue's desks and kiosks.

A venue's network is shared with exhibitors and guests, and one Cluster may serve many venues: each agent gets its
venue's keys (``badge:{venue}:*``) and nothing else, and only the commands it sends. Redis checks ACLs on every
command a Lua script calls too, so the command list is read from the scripts themselves (``TIME`` included) and a
new ``redis.call`` in a script cannot be forgotten here.

The kiosk user may enqueue and read status, nothing more: it has no ``LMOVE``/``BLMOVE``/``LREM`` and may write only
job hashes, the pool, pinned queues and their index, events and counters, so it can neither claim nor confirm a badge
(running the ``take`` or ``confirm`` script as the kiosk user ends in NOPERM before anything is written).

The password never appears: it is read from (or created in, mode 0600) ``--password-file`` and the line carries only
its SHA-256 (``#<hex>``), as ``ACL SETUSER`` allows.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

import click

from agent.cli import fail
from agent.protocol.keys import PRINTER_RE, VENUE_RE, Keys
from agent.protocol.scripts import SCRIPT_NAMES, script_source

_CALL = re.compile(r"redis\.p?call\(\s*['\"]([A-Za-z]+)['\"]")

#: What every client sends: scripts (EVALSHA, and SCRIPT LOAD/EXISTS when a cache is empty), PING for health, INFO
#: replication when Sentinels disagree during a failover, CLUSTER SLOTS for a Cluster's slot map and COMMAND
#: (redis-py's Cluster client reads the command table). agent/connection.py turns redis-py's CLIENT SETINFO off, so
#: it need not be granted. No SELECT: key patterns do not name a database, so a user allowed to switch could reach
#: another db's badge keys; a venue under these users lives in db 0 (the only one a Cluster has).
BASE = ("ping", "eval", "evalsha", "script|load", "script|exists", "info", "time", "cluster|slots", "command")
#: ``status``, ``job``, ``events``: reads only.
READS = (
    "hget", "hgetall", "hkeys", "get", "exists", "llen", "lrange", "lindex",
    "zrange", "zscore", "xrange", "xrevrange", "xread",
)  # fmt: skip
#: What the agent sends outside scripts (agent/protocol/store.py): the blocking pop, the clean leave, events.
AGENT_DIRECT = ("blmove", "xadd", "set", "zrem", "multi", "exec")


def script_commands(*names: str) -> set[str]:
    """Every command the named scripts call (all scripts when none are named)."""
    found: set[str] = set()
    for name in names or SCRIPT_NAMES:
        found.update(cmd.lower() for cmd in _CALL.findall(script_source(name)))
    return found


def agent_commands() -> list[str]:
    return sorted(script_commands() | set(BASE) | set(READS) | set(AGENT_DIRECT))


def kiosk_commands() -> list[str]:
    return sorted(script_commands("enqueue") | set(BASE) | set(READS))


#: What the intake service sends outside scripts (agent/intake/app.py): reads, and its count of each token's
#: outstanding jobs (``owned:<token>``, which the enqueue script fills).
INTAKE_DIRECT = ("hmget", "scard", "smembers", "srem")


def intake_commands() -> list[str]:
    """The intake service (``--intake``): enqueue, the staff scripts (reprint, cancel) and reads."""
    return sorted(script_commands("enqueue", "reprint", "cancel") | set(BASE) | set(READS) | set(INTAKE_DIRECT))


def intake_user(venue: str) -> str:
    return f"badge-{venue}-intake"


def agent_user(venue: str, printer: str) -> str:
    return f"badge-{venue}-{printer}"


def kiosk_user(venue: str) -> str:
    return f"badge-{venue}-kiosk"


def setuser_rules(venue: str, password_sha256: str, kiosk: bool, intake: bool = False) -> list[str]:
    """The rules after ``ACL SETUSER <name>`` (also valid in an ACL file after ``user <name>``)."""
    k = Keys(venue)
    rules = ["reset", "on", f"#{password_sha256}"]
    if intake:
        # Enqueue's keys, plus what reprint and cancel write: a job's done gate (a new round) and the DLQ.
        writable = [k.job("*"), k.done("*"), k.pool, k.queue("*"), k.pinned, k.events, k.stats, k.dlq, k.owned("*")]
        rules += [f"%RW~{pattern}" for pattern in writable] + [f"%R~{k.prefix}*"]
        commands = intake_commands()
    elif kiosk:
        # Write only where enqueueing writes; read the rest of the venue (Redis >= 7 key selectors).
        writable = [k.job("*"), k.pool, k.queue("*"), k.pinned, k.events, k.stats]
        rules += [f"%RW~{pattern}" for pattern in writable] + [f"%R~{k.prefix}*"]
        commands = kiosk_commands()
    else:
        rules.append(f"~{k.prefix}*")
        commands = agent_commands()
    rules += ["resetchannels", f"&{k.prefix}*", "-@all"] + [f"+{c}" for c in commands]
    return rules


def read_or_create_password(path: Path) -> str:
    """The secret in ``path``; a new random one (written with mode 0600) when the file does not exist yet."""
    if path.exists():
        secret = path.read_text(encoding="utf-8").strip()
        if not secret:
            raise click.ClickException(f"{path} is empty")
        return secret
    secret = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secret + "\n")
    return secret


@click.command()
@click.option("--venue", required=True, help="The venue (its keys are badge:{VENUE}:*).")
@click.option("--printer", help="The agent's printer name (one user per agent).")
@click.option("--kiosk", is_flag=True, help="The user for check-in desks and kiosks: enqueue and read status only.")
@click.option(
    "--password-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The user's password; created (random, mode 0600) when missing. Point redis.password_file at it.",
)
@click.option("--intake", is_flag=True, help="The user for the intake service: enqueue, reprint, cancel, reads.")
@click.option("--acl-file", "acl_file_format", is_flag=True, help="Print a line for an ACL file (user ...).")
def acl(
    venue: str, printer: str | None, kiosk: bool, intake: bool, password_file: Path | None, acl_file_format: bool
) -> None:
    """Print the least-privilege ACL SETUSER line for one agent (--printer) or for desks/kiosks (--kiosk).

    Run it on the venue's Redis (on every node of a Cluster, and on every server under Sentinel):
    redis-cli ... $(badge-agent acl ...). Only the password's SHA-256 is printed.
    """
    if not VENUE_RE.match(venue):
        fail("--venue: lowercase letters, digits and - (at most 63)")
    if [kiosk, intake, printer is not None].count(True) != 1:
        fail("give --printer NAME for an agent, --kiosk for desks and kiosks, or --intake for the intake service")
    if printer is not None and not PRINTER_RE.match(printer):
        fail("--printer: lowercase letters, digits, - and _ (at most 63)")
    if password_file is None:
        fail("give --password-file FILE (it is created with a random password when missing)")
        return
    secret = read_or_create_password(password_file)
    digest = hashlib.sha256(secret.encode("utf-8")).hexdigest()
    if intake:
        name = intake_user(venue)
    else:
        name = kiosk_user(venue) if kiosk or printer is None else agent_user(venue, printer)
    rules = " ".join(setuser_rules(venue, digest, kiosk, intake))
    click.echo(f"user {name} {rules}" if acl_file_format else f"ACL SETUSER {name} {rules}")
