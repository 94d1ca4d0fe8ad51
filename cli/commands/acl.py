"""``badge-agent acl``: the least-privilege Redis user of one agent, or of one role (desks and kiosks, the intake).

A venue's network is shared with exhibitors and guests, and one Cluster may serve many venues: each user gets its
venue's keys (``badge:{venue}:*``) and nothing else, and only the commands it sends. Scripts run as functions of the
protocol's library (protocol/library.py), so a user gets ``FCALL`` of exactly the functions it calls
(``+fcall|<function>``) and no ``EVAL``: no credential can run a script of its own (one that writes once and loops
forever would make Redis answer BUSY to every venue until ``SHUTDOWN NOSAVE``). Redis checks every command a
function runs against the caller's ACL too, so the commands are read from the scripts themselves (``TIME``
included) and a new ``redis.call`` in a script cannot be forgotten here.

The functions that change the venue's badge layouts (``layouts.specs.ADMIN_ONLY``) are granted to no agent and no
role: only a Redis admin runs ``badge-agent layout set``, ``rm`` and ``rules``.

A role (``ROLES``: the kiosk, the intake; a new kind of client adds its own) writes only through typed selectors:
each command that writes is allowed only on the keys of its type (``HSET`` on job hashes and counters, ``LPUSH``
on the pool and pinned queues, ``DEL`` on ``done`` markers, ...), so no role user can leave a key of the wrong type
for a printer to meet. What cannot be narrowed: the commands a role's functions run are the user's own (Redis has no
"only inside this function"), so the intake may still ``HSET`` any field of a job hash or ``DEL`` a ``done`` marker
by hand; ``begin`` dead-letters a job whose record contradicts the protocol rather than print it (docs/redis.md).

The password never appears: it is read from (or created in, mode 0600) ``--password-file`` and the line carries only
its SHA-256 (``#<hex>``), as ``ACL SETUSER`` allows.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from cli.main import fail
from eventday import keys as day_keys
from layouts.keys import LayoutKeys
from layouts.specs import ADMIN_ONLY
from preprint.keys import PreprintKeys
from pretix_sync.keys import PretixKeys
from protocol.keys import PRINTER_RE, VENUE_RE, Keys
from protocol.library import Library, default_library
from protocol.scripts import LOAD_COMMAND
from webhooks.alerts import alerts_key, dlq_samples_key, redis_key
from webhooks.keys import WebhookKeys

_CALL = re.compile(r"redis\.p?call\(\s*['\"]([A-Za-z]+)['\"]")

#: What every client sends: PING for health, INFO replication when Sentinels disagree during a failover, CLUSTER
#: SLOTS for a Cluster's slot map and COMMAND (redis-py's Cluster client reads the command table); TIME, which
#: every function calls. protocol/connection.py turns redis-py's CLIENT SETINFO off, so it need not be granted. No
#: SELECT: key patterns do not name a database, so a user allowed to switch could reach another db's badge keys; a
#: venue under these users lives in db 0 (the only one a Cluster has). No EVAL, EVALSHA or SCRIPT: functions only.
BASE = ("ping", "info", "time", "cluster|slots", "command")
#: ``status``, ``job``, ``events``: reads only.
READS = (
    "hget", "hgetall", "hkeys", "hmget", "get", "exists", "llen", "lrange", "lindex",
    "zrange", "zscore", "zcard", "xrange", "xrevrange", "xread", "xlen", "scard", "smembers",
)  # fmt: skip
#: Reads functions make besides those (allowed on every key of the venue, as READS are); the attendee list's search
#: reads ranges of its terms and its postings (attendees/store.py) itself; a ref counter that restarts (a hand wrote
#: something else there) counts the refs in use (attendee_put.lua).
SCRIPT_READS = ("lpos", "type", "zrangebyscore", "zrangebylex", "mget", "pttl", "hexists", "hvals", "hlen")
#: What the agent sends outside scripts (protocol/store.py): the blocking pop, the clean leave, events; and
#: the announcement of a change of the venue's badge layouts (layouts/book.py), subscribed to; and ``cancel --token``
#: with the same credential, which removes cancelled jobs from the token's set.
AGENT_DIRECT = ("blmove", "xadd", "set", "zrem", "multi", "exec", "subscribe", "unsubscribe", "srem")

#: A key's Redis type -> the commands that write it (and cannot change its type). DEL only deletes.
TYPE_WRITES: dict[str, frozenset[str]] = {
    "hash": frozenset({"hset", "hsetnx", "hincrby", "hdel"}),
    "list": frozenset({"lpush", "rpush", "lrem", "lmove", "blmove", "ltrim"}),
    "zset": frozenset({"zadd", "zrem", "zremrangebyscore", "zremrangebyrank"}),
    "set": frozenset({"sadd", "srem"}),
    "stream": frozenset({"xadd", "xdel", "xtrim"}),
    "string": frozenset({"set", "del", "append"}),
}

#: The type of each venue key a role may write (the key table of docs/redis.md).
KEY_TYPES: dict[str, tuple[Callable[[Keys], str], str]] = {
    "job": (lambda k: k.job("*"), "hash"),
    "done": (lambda k: k.done("*"), "string"),
    "pool": (lambda k: k.pool, "list"),
    "queue": (lambda k: k.queue("*"), "list"),
    "dlq": (lambda k: k.dlq, "list"),
    "pinned": (lambda k: k.pinned, "zset"),
    "events": (lambda k: k.events, "stream"),
    "stats": (lambda k: k.stats, "hash"),
    # an intake token's jobs (its outstanding count)
    "owned": (lambda k: k.owned("*"), "set"),
    # the printers' in-flight lists: a reprint removes a printed job's stale id from them (reprint.lua)
    "inflight": (lambda k: k.inflight("*"), "list"),
    # the attendee list (attendees/keys.py)
    "attendee": (lambda k: f"{k.prefix}att:*", "hash"),
    "attendee_terms": (lambda k: f"{k.prefix}attendees:terms", "zset"),
    "attendee_postings": (lambda k: f"{k.prefix}attendees:p:*", "string"),
    "attendee_exact": (lambda k: f"{k.prefix}attendees:exact", "hash"),
    "attendee_refs": (lambda k: f"{k.prefix}attendees:refs", "hash"),
    "attendee_counts": (lambda k: f"{k.prefix}attendees:counts", "hash"),
    "attendee_badging": (lambda k: f"{k.prefix}attendees:badging", "hash"),
    "attendee_secret": (lambda k: f"{k.prefix}attendees:key", "string"),
    # the pre-print runs (preprint/keys.py): a run's hash, its boxes and its void list, all hashes under the run's
    # name (a box's list of codes, written only by the admin's `preprint plan`, is not among them)
    "preprint_run": (lambda k: PreprintKeys(k.venue).run("*"), "hash"),
    # the printed record (protocol/printed.py): written by confirm, trimmed by its consumers as they take it
    "printed": (lambda k: k.printed, "stream"),
    "printed_consumers": (lambda k: k.printed_consumers, "hash"),
    # the pretix sync (pretix_sync/keys.py): its jobs' positions, the outbox of confirmed prints, the sender's lease
    "pretix_jobs": (lambda k: PretixKeys(k.venue).jobs, "hash"),
    "pretix_outbox": (lambda k: PretixKeys(k.venue).outbox, "stream"),
    "pretix_sender": (lambda k: PretixKeys(k.venue).sender, "string"),
    # walk-ins that become pretix orders (pretix_sync/walk_ins.py): the products offered, those waiting, refused
    "pretix_walk_in_products": (lambda k: PretixKeys(k.venue).walk_in_products, "string"),
    "pretix_walk_ins": (lambda k: PretixKeys(k.venue).walk_ins, "stream"),
    "pretix_walk_in_failed": (lambda k: PretixKeys(k.venue).walk_in_failed, "hash"),
    # the webhooks' sender (webhooks/keys.py): pending deliveries and their order, those given up, its cursor in
    # the events stream, its lease
    "webhooks_pending": (lambda k: WebhookKeys(k.venue).pending("*"), "hash"),
    "webhooks_queue": (lambda k: WebhookKeys(k.venue).queue("*"), "zset"),
    "webhooks_gaveup": (lambda k: WebhookKeys(k.venue).gaveup("*"), "list"),
    "webhooks_cursor": (lambda k: WebhookKeys(k.venue).events_cursor, "string"),
    "webhooks_sender": (lambda k: WebhookKeys(k.venue).sender, "string"),
    # its alerts (webhooks/alerts.py): the episodes, the DLQ's recent lengths, the Redis server last seen
    "alerts": (lambda k: alerts_key(k.venue), "hash"),
    "alerts_dlq": (lambda k: dlq_samples_key(k.venue), "zset"),
    "alerts_redis": (lambda k: redis_key(k.venue), "hash"),
    # the event day's numbers (eventday/): readers trim the per-minute counts and note when a fault was first seen
    "minutes": (lambda k: k.minutes, "hash"),
    "eventday_faults": (lambda k: day_keys.faults(k.venue), "hash"),
    "eventday_rolls": (lambda k: day_keys.rolls(k.venue), "hash"),
}
#: What a reader of the event day's numbers writes (eventday/counts.py): old buckets out, a fault's first sighting,
#: a roll change a printer showed (back from running out of media).
EVENTDAY_ONLY = (("minutes", ("hdel",)), ("eventday_faults", ("hsetnx", "hdel")), ("eventday_rolls", ("hset",)))
#: The attendee list's functions and keys, which the intake's attendee routes call and write.
ATTENDEE_FUNCTIONS = (
    "attendee_put", "attendee_badge", "attendee_edit", "attendee_status", "attendee_checkin", "attendee_payload",
    "attendee_search", "attendee_read",
)  # fmt: skip
ATTENDEE_WRITES = (
    "attendee", "attendee_terms", "attendee_postings", "attendee_exact", "attendee_refs", "attendee_counts",
    "attendee_badging", "attendee_secret",
)  # fmt: skip

#: The pretix sync's functions and the keys it writes (besides the list's, its badges' when a ticket is cancelled).
PRETIX_SYNC_FUNCTIONS = (
    "attendee_put", "attendee_status", "attendee_payload", "attendee_read", "cancel", "pretix_lease", "pretix_sent",
    "pretix_pump",
)  # fmt: skip
PRETIX_SYNC_WRITES = (
    "job", "pool", "queue", "pinned", "events", "stats", *(w for w in ATTENDEE_WRITES if w != "attendee_secret"),
    "pretix_jobs", "pretix_outbox", "pretix_sender", "printed", "printed_consumers", "pretix_walk_in_products",
    "pretix_walk_ins", "pretix_walk_in_failed", "preprint_run",
    # a change to an attendee of a pre-print run names the completion gate of their pre-print job (put.lua): read only
    "done",
)  # fmt: skip


def script_commands(*names: str, library: Library | None = None) -> set[str]:
    """Every command the named scripts call (all scripts of the library when none are named)."""
    library = library or default_library()
    found: set[str] = set()
    for name in names or library.scripts:
        found.update(cmd.lower() for cmd in _CALL.findall(library.sources[name]))
    return found


@dataclass(frozen=True)
class Role:
    """One kind of client that is not an agent: the functions it calls, what else it sends, the keys it writes."""

    name: str
    help: str
    #: scripts of the library it calls (``FCALL``)
    functions: tuple[str, ...]
    #: the venue keys (``KEY_TYPES``) it writes, through its functions or itself
    writes: tuple[str, ...]
    #: commands it sends itself besides BASE and READS (each one a write of a key type in ``writes``)
    direct: tuple[str, ...] = ()
    #: (key, commands): a key written by fewer of its type's commands than the role uses on that type (``done``
    #: markers are only deleted, while the attendee list's strings are set and appended to)
    only: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def user(self, venue: str) -> str:
        return f"badge-{venue}-{self.name}"

    def commands(self, library: Library | None = None) -> set[str]:
        return script_commands(*self.functions, library=library) | set(self.direct)


#: Every role a venue's users are made for. The attendee-list tools or a pretix sync get a Role of their own here,
#: naming their functions and the keys they write: ``badge-agent acl --role NAME`` then prints their user.
ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role(
            "kiosk",
            "check-in desks and kiosks: enqueue and read status only",
            functions=("enqueue",),
            # owned: enqueue adds an intake token's jobs to its set (never with this user's calls, which name none)
            writes=("job", "pool", "queue", "pinned", "events", "stats", "owned"),
        ),
        Role(
            "intake",
            "the intake service: enqueue, reprint, cancel, the attendee list, reads",
            functions=("enqueue", "reprint", "cancel", *ATTENDEE_FUNCTIONS, "preprint_handover", "preprint_at_door"),
            # reprint starts a new round: it deletes the job's done marker, takes it out of the DLQ and a stale copy
            # of its id out of any printer's in-flight list; enqueue adds a token's jobs to its set
            # (``owned:<token>``), which the intake prunes of final ones
            writes=(
                "job",
                "done",
                "pool",
                "queue",
                "dlq",
                "pinned",
                "events",
                "stats",
                "owned",
                "inflight",
                *ATTENDEE_WRITES,
                "pretix_walk_ins",
                # a correction or a print at the door (preprint_at_door.lua) voids a pre-printed badge on its
                # run's list; the desk's hand-over counts on the run, is told to the printed record's consumers and
                # is an arrival in the event day's counts (preprint_handover.lua, count_handover)
                "preprint_run",
                "printed",
                "minutes",
                # named to the hand-over (whether anyone reads the record), never written
                "printed_consumers",
            ),
            # a purged attendee's job payload; the attendee list's job-id secret, made once (SET NX); the search's
            # ranges of terms and the locations of printing badges (attendees/store.py); final jobs out of a token's
            # set. The event day's numbers it shows it only reads (HSETNX and HDEL here would reach every hash it
            # writes): the board and the webhooks sender note a fault's first sighting and trim the counts.
            direct=("hset", "set", "zrangebylex", "mget", "srem"),
            # a walk-in that wants a pretix order is only added (the pretix sync takes it out); the printed record's
            # consumers only named to the hand-over
            only=(
                ("done", ("del",)),
                ("inflight", ("lrem",)),
                ("pretix_walk_ins", ("xadd",)),
                ("printed_consumers", ()),
            ),
        ),
        Role(
            "pretix-sync",
            "attendees sync --follow: the attendee list from pretix, the outbox of confirmed prints to pretix",
            # put, a cancelled ticket (status, and cancel for its badge not yet taken), a changed name on its badge;
            # the outbox's lease, the pump from the printed record and the removal of what pretix answered
            functions=(*PRETIX_SYNC_FUNCTIONS,),
            writes=(*PRETIX_SYNC_WRITES,),
            # each ticket's job id -> its pretix position (pretix_sync/listing.py); joining the printed record;
            # the walk-in products offered (set, or deleted when none), walk-ins ordered or refused (removed, the
            # refusal kept until an order is made)
            direct=("hset", "hsetnx", "set", "del", "xdel", "hdel"),
            # the record is added to by confirm (agents) and only trimmed here, past what every consumer took;
            # its consumers' cursors only set; events only added to; walk-ins only taken out (the intake adds them)
            only=(
                ("printed", ("xtrim",)),
                ("printed_consumers", ("hset", "hsetnx")),
                ("events", ("xadd",)),
                ("pretix_walk_ins", ("xdel",)),
                ("pretix_walk_in_failed", ("hset", "hdel")),
                ("done", ()),
            ),
        ),
        Role(
            "webhooks",
            "webhooks run: reads the printed record and dead letters, queues and sends the venue's webhooks",
            # the cursor past what it took from the printed record (which trims what every consumer took)
            functions=("printed_took",),
            writes=(
                "printed",
                "printed_consumers",
                "webhooks_pending",
                "webhooks_queue",
                "webhooks_gaveup",
                "webhooks_cursor",
                "webhooks_sender",
                "alerts",
                "alerts_dlq",
                "alerts_redis",
                "minutes",
                "eventday_faults",
                "eventday_rolls",
            ),
            # joining the record; the deliveries queued, retried and removed; those given up (capped); the cursor in
            # the events stream; the lease (SET ... GET, DEL at a clean stop). The webhooks themselves (``P
            # webhooks``) are an admin's (``webhooks add``): never written by this user.
            # the alerts' episodes and the DLQ's lengths (trimmed to the window) besides
            direct=(
                "hsetnx",
                "hset",
                "hdel",
                "zadd",
                "zrem",
                "lpush",
                "ltrim",
                "set",
                "del",
                "zremrangebyscore",
                "zremrangebyrank",
            ),
            only=(("printed", ("xtrim",)), ("printed_consumers", ("hset", "hsetnx")), *EVENTDAY_ONLY),
        ),
    )
}


#: The keys an agent reads and writes: the protocol's, every printer's among them (a peer's sweep, reclaim and steal
#: move a silent printer's work: docs/security.md), and the venue's badge layouts. Not the attendee list (``att:*``,
#: ``attendees:*``): a stolen Pi must not hold every ticket code, name and e-mail of the venue, and no step of an
#: agent reads it (a listed attendee's badge is an ordinary job by the time a printer takes it).
AGENT_KEYS: tuple[Callable[[Keys], str], ...] = (
    lambda k: k.pool,
    lambda k: k.queue("*"),
    lambda k: k.inflight("*"),
    lambda k: k.pinned,
    lambda k: k.job("*"),
    lambda k: k.done("*"),
    lambda k: k.dlq,
    lambda k: k.events,
    lambda k: k.stats,
    lambda k: k.hb,
    lambda k: k.printers,
    lambda k: k.health("*"),
    lambda k: k.control("*"),
    lambda k: k.sweep_lease,
    lambda k: k.printed,
    lambda k: k.printed_consumers,
    # confirm counts the print in the event day's per-minute counts (eventday/, the board's arrival curve)
    lambda k: k.minutes,
    # groups (a box of a pre-print run): claimed whole, taken, handed back by the agents (group_claim, take,
    # group_back); their jobs are ordinary jobs, no attendee list
    lambda k: k.groups,
    lambda k: k.group("*"),
    lambda k: k.group_held("*"),
    lambda k: k.group_claim("*"),
    # ``cancel --token`` with an agent's credential takes cancelled jobs out of the token's set
    lambda k: k.owned("*"),
    lambda k: LayoutKeys(k.venue).layouts,
    lambda k: LayoutKeys(k.venue).layouts_version,
    lambda k: LayoutKeys(k.venue).layout_rules,
    lambda k: LayoutKeys(k.venue).layout("*", "*"),
)
#: Keys an agent's credential only reads, for ``badge-agent status`` on a Pi: counts and backlogs, no attendee (the
#: list's counts and the ticket types of badges not yet counted, pretix's job -> position map and outbox, the
#: webhooks' addresses and queue lengths; a webhook's secret is never in Redis).
AGENT_READS: tuple[Callable[[Keys], str], ...] = (
    lambda k: f"{k.prefix}attendees:counts",
    lambda k: f"{k.prefix}attendees:badging",
    lambda k: f"{k.prefix}pretix:*",
    lambda k: WebhookKeys(k.venue).hooks,
    lambda k: WebhookKeys(k.venue).queue("*"),
    lambda k: WebhookKeys(k.venue).gaveup("*"),
    lambda k: WebhookKeys(k.venue).sender,
)
#: Functions of features an agent never calls, whose keys it does not have: the attendee list's and the pretix
#: sync's (the intake's and the sync's roles call them).
AGENT_NEVER = ("attendee_", "pretix_")


def agent_functions(library: Library) -> tuple[str, ...]:
    """Every function of the library an agent may call: all but the admin's (changing the venue's layouts) and those
    of the features whose keys it does not have (``AGENT_NEVER``)."""
    return tuple(name for name in library.scripts if name not in ADMIN_ONLY and not name.startswith(AGENT_NEVER))


def agent_commands(library: Library | None = None) -> list[str]:
    library = library or default_library()
    used = script_commands(*agent_functions(library), library=library)
    return sorted(used | set(BASE) | set(READS) | set(AGENT_DIRECT))


def _fcalls(names: Iterable[str], library: Library) -> list[str]:
    return [f"+fcall|{library.function(name)}" for name in (*names, "version")]


def role_rules(role: Role, venue: str, library: Library | None = None) -> list[str]:
    """A role's permissions: reads and its functions on the root, and one selector per set of writing commands,
    which allows those commands on the keys of the type they write alone (``Role.only`` narrows one key's)."""
    library = library or default_library()
    k = Keys(venue)
    used = role.commands(library)
    reads = set(BASE) | set(READS) | set(SCRIPT_READS)
    limits = dict(role.only)
    by_type: dict[tuple[str, ...], list[str]] = {}  # the writing commands allowed -> the keys they are allowed on
    for key in role.writes:
        pattern, kind = KEY_TYPES[key]
        allowed = used & TYPE_WRITES[kind] & set(limits.get(key, TYPE_WRITES[kind]))
        by_type.setdefault(tuple(sorted(allowed)), []).append(pattern(k))
    selectors: list[str] = []
    covered: set[str] = set()
    for commands, patterns in by_type.items():
        covered.update(commands)
        if commands:
            selectors.append("(" + " ".join([*(f"+{c}" for c in commands), *(f"~{p}" for p in patterns)]) + ")")
    stray = used - reads - covered
    if stray:
        raise ValueError(f"role {role.name}: no key type it writes allows {', '.join(sorted(stray))}")
    # FCALL's own check: it may pass the keys its functions write; the root reads the rest of the venue.
    patterns = [f"%RW~{p}" for patterns in by_type.values() for p in patterns] + [f"%R~{k.prefix}*"]
    root = [f"+{c}" for c in sorted(reads & (used | set(BASE) | set(READS)))] + _fcalls(role.functions, library)
    return [*patterns, "resetchannels", f"&{k.prefix}*", "-@all", *root, *selectors]


def agent_rules(venue: str, library: Library | None = None) -> list[str]:
    """An agent's permissions: its venue's protocol and layout keys (``AGENT_KEYS``) and a few counts it reads
    (``AGENT_READS``), the commands it sends, and the library's functions but the admin's and the attendee list's."""
    library = library or default_library()
    k = Keys(venue)
    keys = [f"~{pattern(k)}" for pattern in AGENT_KEYS] + [f"%R~{pattern(k)}" for pattern in AGENT_READS]
    commands = [f"+{c}" for c in agent_commands(library)]
    fcalls = _fcalls(agent_functions(library), library)
    return [*keys, "resetchannels", f"&{k.prefix}*", "-@all", *commands, *fcalls]


def agent_user(venue: str, printer: str) -> str:
    return f"badge-{venue}-{printer}"


def setuser_rules(venue: str, password_sha256: str, role: Role | None, library: Library | None = None) -> list[str]:
    """The rules after ``ACL SETUSER <name>`` (also valid in an ACL file after ``user <name>``): an agent's when
    ``role`` is None."""
    rules = ["reset", "on", f"#{password_sha256}"]
    return rules + (agent_rules(venue, library) if role is None else role_rules(role, venue, library))


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
@click.option(
    "--role",
    type=click.Choice(sorted(ROLES)),
    help="A user for one role: " + "; ".join(f"{role.name}: {role.help}" for role in ROLES.values()) + ".",
)
@click.option("--kiosk", is_flag=True, help="Same as --role kiosk.")
@click.option("--intake", is_flag=True, help="Same as --role intake.")
@click.option(
    "--password-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The user's password; created (random, mode 0600) when missing. Point redis.password_file at it.",
)
@click.option("--acl-file", "acl_file_format", is_flag=True, help="Print a line for an ACL file (user ...).")
def acl(
    venue: str,
    printer: str | None,
    role: str | None,
    kiosk: bool,
    intake: bool,
    password_file: Path | None,
    acl_file_format: bool,
) -> None:
    """Print the least-privilege ACL SETUSER line for one agent (--printer) or one role (--role, --kiosk, --intake).

    Run it on the venue's Redis (on every node of a Cluster, and on every server under Sentinel):
    redis-cli ... $(badge-agent acl ...). Only the password's SHA-256 is printed. The user calls functions of the
    protocol's library, which an admin loads once (badge-agent functions load).
    """
    if not VENUE_RE.match(venue):
        fail("--venue: lowercase letters, digits and - (at most 63)")
    roles = [r for r in ("kiosk" if kiosk else None, "intake" if intake else None, role) if r is not None]
    if len(roles) + (printer is not None) != 1:
        fail("give --printer NAME for an agent, or one --role (--kiosk for desks and kiosks, --intake for the intake)")
    if printer is not None and not PRINTER_RE.match(printer):
        fail("--printer: lowercase letters, digits, - and _ (at most 63)")
    if password_file is None:
        fail("give --password-file FILE (it is created with a random password when missing)")
        return
    secret = read_or_create_password(password_file)
    digest = hashlib.sha256(secret.encode("utf-8")).hexdigest()
    chosen = ROLES[roles[0]] if roles else None
    name = chosen.user(venue) if chosen is not None else agent_user(venue, printer or "")
    rules = " ".join(setuser_rules(venue, digest, chosen))
    click.echo(f"user {name} {rules}" if acl_file_format else f"ACL SETUSER {name} {rules}")
    click.echo(
        f"badge-agent: this user calls the functions of library {default_library().name}: an admin loads it once "
        f"per Redis with `{LOAD_COMMAND}` (docs/redis.md)",
        err=True,
    )
