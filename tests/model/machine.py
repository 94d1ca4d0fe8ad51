"""The protocol as a model: random interleavings of agents, printers, staff and faults, checked after every step.

Each example is a fresh venue on one real ``redis-server`` with 2-4 printers, each run by a real ``PullLoop`` held at
gates (harness.py). The model is the world outside Redis: what physically came out of each printer, what the desks
were told, what staff did. After every step the invariants of docs/design.md ("The protocol as a specification")
are checked against Redis and that world.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.retry import Retry

from agent.recovery import RECONFIRM_AFTER_FAILOVER
from cli.redis_server import RedisServer
from drivers.base import Outcome
from protocol.codec import enc
from protocol.jobs import parse_job
from protocol.keys import Keys, split_pinned_member
from protocol.library import Library, build
from protocol.replies import BeginKind, Source
from protocol.store import Store
from tests.model.harness import LOSE_REPLY, LOSE_REQUEST, RUN, ModelAgent, run, settle, verdict
from tests.support.venue import pinned_index_mismatch

JOB_IDS = tuple(f"j{i}" for i in range(6))
#: The zones a job may belong to (docs/intake.md, "Zones"): two printers each; with fewer agents a zone names
#: printers that never beat, which can never print (steal and every hand-on then treat the zone as down).
ZONES = {"near": ("p0", "p1"), "far": ("p2", "p3")}

#: The boxes a desk may add (a group of jobs one printer prints whole and in order: docs/design.md, "Pre-printed
#: boxes"), each of up to ``BOX_MAX`` jobs named ``<box>.<i>`` in print order; a box handed on mid-way is opened by a
#: continuation label ``<box>:c<n>`` (group_back.lua), at most ``CONTINUED_MAX`` of which the model reads back.
BOX_IDS = ("b0", "b1")
BOX_MAX = 3
CONTINUED_MAX = 4
#: The continuation label's payload (``{first}`` and ``{count}`` filled in by group_back.lua).
CONT = json.dumps(
    {"job_id": "", "attendee_id": "box", "name": "Box, continued", "company": "{first}", "role": "{count}"}
)
#: Every job id the model may see: the desks' own, the boxes' badges and their continuation labels.
ALL_JOB_IDS = (
    *JOB_IDS,
    *(f"{box}.{i}" for box in BOX_IDS for i in range(BOX_MAX)),
    *(f"{box}:c{n}" for box in BOX_IDS for n in range(1, CONTINUED_MAX + 1)),
)

#: A printer that holds the next badge while one prints (an IPP printer: ``take`` with room 2), its agent played by the
#: model itself (``ProtocolModel.holder_*``): the real loop's two concurrent steps at such a printer (the badge printing
#: and the next being taken, begun and handed over) would need two gates per agent. Not in a zone, never pinned to.
HOLDER = "ipp"
HOLDER_PLACE = "Hall B"
#: How many jobs each printer's in-flight list may hold: one for the loops' printers, two for the holder.
ROOM = {HOLDER: 2}

REWRITE_EVERY = 50  # sequences between two rewrites of the model server's AOF (ProtocolModel.teardown)

# Counters of the stats hash and the event each one counts (docs/redis.md).
COUNTED = ("enqueued", "printed", "reprint", "cancelled", "duplicate_print", "maybe_duplicate", "dead", "released")
#: Values no step can count with, which the corrupt rules write where a number belongs.
WORDS = ("many", "1.5", "")


def model_server(directory: Path) -> RedisServer:
    """The model's redis-server (not started). Its restart is a kill (``RedisServer.restart``): what it wrote to its
    AOF before replying survives that without an fsync (appendfsync no writes before each reply, never later, unlike
    everysec), and an fsync a write cost 1-2 ms of waiting."""
    return RedisServer(directory, appendonly=True, fsync="no")


@dataclasses.dataclass
class ModelWorld:
    """Where the model runs: one redis-server (restarted by the model), a directory, and the scripts to load."""

    def __post_init__(self) -> None:
        if self.scripts_dir is not None:
            self.library = build([self.scripts_dir])

    server: RedisServer
    workdir: Path
    scripts_dir: Path | None = None
    coverage: Counter[str] = dataclasses.field(default_factory=Counter)
    failures: list[str] = dataclasses.field(default_factory=list)  # each invariant broken, in the order seen
    steps: int = 0
    sequences: int = 0
    library: Library | None = None  # the scripts, when not the installed ones (a mutant's copy)
    last_sequence_steps: int = 0  # steps of the latest sequence (after a failure: the shrunk counterexample's)


def box_of(job_id: str) -> tuple[str, int] | None:
    """The box a job belongs to and its place in the box's print order; None for a desk's job or a continuation
    label (which opens whatever is left, wherever that is)."""
    box, dot, place = job_id.partition(".")
    return (box, int(place)) if dot and box in BOX_IDS and place.isdigit() else None


@dataclasses.dataclass(frozen=True)
class Copy:
    """A badge that physically came out: of which job, at which printer, under which begin and which round."""

    job_id: str
    printer: str
    epoch: int
    round_epoch: int


@dataclasses.dataclass
class Held:
    """A job the model's IPP printer holds: taken, then begun (sent to the printer, where it prints or waits)."""

    job_id: str
    begun: bool = False
    epoch: int = 0
    round_epoch: int = 0


@dataclasses.dataclass
class Snapshot:
    """A replica's view of the venue at one moment (what a failover to it keeps), and the model's ledger then."""

    dumps: list[tuple[bytes, int, bytes]]
    acked: list[str]
    reprints: int
    drain_inflight: dict[str, set[str]]


_venues = itertools.count()

# The invariants' read of the venue, one script (one atomic step, one round trip); EVALSHA, loaded again after a
# Redis restart emptied the script cache (redis-py's Script).
STATE_SCRIPT = (Path(__file__).parent / "state.lua").read_text(encoding="utf-8")


def _pairs(flat: list[bytes]) -> dict[str, str]:
    """A flat field, value, field, value ... reply as a dict of text."""
    return {a.decode(): b.decode() for a, b in zip(flat[::2], flat[1::2], strict=True)}


WORLD: ModelWorld | None = None  # set by the test or scripts/verify before the machine runs


class ProtocolModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        assert WORLD is not None, "set tests.model.machine.WORLD first"
        self.world = WORLD
        self.world.sequences += 1
        self.world.last_sequence_steps = 0
        self.loop = asyncio.new_event_loop()
        self.venue = f"model{uuid.uuid4().hex[:8]}-{next(_venues)}"
        self.keys = Keys(self.venue)
        self.dir = Path(tempfile.mkdtemp(prefix="model-", dir=self.world.workdir))
        retry = Retry(NoBackoff(), 20)
        self.admin = Redis.from_url(
            self.world.server.url,
            decode_responses=False,
            retry=retry,
            retry_on_error=[RedisConnectionError],
            driver_info=None,  # no CLIENT SETINFO on connect (Redis 7.0 refuses it): a round trip a connection
        )
        self.desk = Store(self.admin, self.venue, library=self.world.library)
        self._state = self.admin.register_script(STATE_SCRIPT)
        self.agents: dict[str, ModelAgent] = {}
        self.moved = asyncio.Event()  # any agent's loop moved (harness.settle)
        self.boots: dict[str, str] = {}
        self.acked: list[str] = []  # jobs the desks were told are queued, in order
        self.reprints = 0  # reprints staff were told started
        self.copies: list[Copy] = []
        self.violations: list[str] = []
        self.drain_inflight: dict[str, set[str]] = {}
        self.stale: set[str] = set()  # printers whose lease is gone: peers may reclaim them
        self.snapshot: Snapshot | None = None
        self.failovers = 0
        self.done_seen: dict[str, tuple[str, str, int]] = {}  # job -> (done by, round, failovers) last seen
        # printer -> the jobs its journal released as unknown or printed before the last failover, until its recovery
        # since (agent/recovery.py) has flagged or confirmed them again: the failover may have lost that flag or confirm
        self.reflag_due: dict[str, set[str]] = {}
        self.boxes: dict[str, tuple[list[str], tuple[str, ...]]] = {}  # box -> its jobs in order, who may claim it
        # box -> the place in print order of its last badge that came out at the printer holding its claim, since the
        # last failover (a failover rolls the claims back: what printed since is checked afresh)
        self.box_last: dict[str, int] = {}
        self.holder: Store | None = None  # the model's IPP printer (HOLDER), when this sequence has one
        self.holder_held: list[Held] = []  # what it holds, oldest (the one printing) first

    # -- plumbing ------------------------------------------------------------------------------------------------

    def _run(self, coro: Any) -> Any:
        try:
            return run(self.loop, coro)
        except AssertionError as exc:  # the harness lost a loop (crashed, spinning): as much a finding as an invariant
            self.world.failures.append(str(exc))
            raise

    def _note(self, what: str) -> None:
        self.world.coverage[what] += 1
        self.world.steps += 1
        self.world.last_sequence_steps += 1

    def _new_agent(self, name: str) -> ModelAgent:
        world = self.world
        agent = ModelAgent(
            self.dir, self.venue, world.server.url, name, world.library, self.boots[name], world.workdir, self.moved
        )
        agent.start(self.loop)
        self.agents[name] = agent
        return agent

    def _settle_all(self) -> None:
        self._run(settle(self.agents.values(), self.admin))

    async def _reconnect_model(self) -> None:
        """The model's own clients (desks, staff, heartbeats) start afresh after the server changed under them; the
        pull loops meet the change as production does."""
        await self.admin.connection_pool.disconnect()
        for agent in self.agents.values():
            await agent.heart_redis.connection_pool.disconnect()

    def _printers(self) -> list[str]:
        """Every printer of the venue: the loops' and, in a sequence that has it, the model's IPP printer."""
        return [*self.agents, HOLDER] if self.holder is not None else list(self.agents)

    def _live(self, pred: Any) -> list[str]:
        return sorted(name for name, a in self.agents.items() if not a.frozen and pred(a))

    def teardown(self) -> None:
        async def down() -> None:
            for agent in self.agents.values():
                await agent.stop()
            keys = [key async for key in self.admin.scan_iter(match=f"{self.keys.prefix}*", count=500)]
            if keys:
                await self.admin.delete(*keys)
            if self.world.sequences % REWRITE_EVERY == 0:
                # The AOF keeps the writes of every finished sequence: rewritten now and then, so that a Redis restart
                # replays about one venue rather than the whole run (1-2 MB each hundred sequences).
                with contextlib.suppress(ResponseError):  # a rewrite still running: the next one will do
                    await self.admin.bgrewriteaof()
            await self.admin.aclose()

        try:
            self._run(down())
        finally:
            self.loop.close()

    # -- set-up --------------------------------------------------------------------------------------------------

    @initialize(n=st.integers(min_value=2, max_value=4), holder=st.booleans())
    def start(self, n: int, holder: bool) -> None:
        for i in range(n):
            name = f"p{i}"
            self.boots[name] = uuid.uuid4().hex
            agent = self._new_agent(name)
            self._run(agent.beat())
        if holder:
            self.holder = Store(self.admin, self.venue, library=self.world.library)
            self._run(self._holder_beat(first=True))
        self._settle_all()
        self._run_start_up()

    def _run_start_up(self) -> None:
        """Each new agent's start-up on an empty venue (read its empty in-flight list, find nothing to take, wait on
        the pool) runs through at once: with no job and no journal it decides nothing, and stepping through it would
        spend most of a sequence's steps before the first badge. Crashes and restarts later in a sequence still go
        through recovery step by step, against whatever the venue then holds."""
        # One agent at a time: which of several blocked pops the server hands a job to goes by the order they
        # blocked in, and that order must be the same in every replay.
        for name in sorted(self.agents):
            agent = self.agents[name]
            for _ in range(12):
                if agent.gate is None or agent.gate.go.done():
                    break
                self._note(f"start-up {agent.gate.kind} {agent.gate.name}")
                agent.release(RUN)
                self._run(agent.settle(self.admin))
            if not agent.popping:
                raise AssertionError(f"{name}: start-up on an empty venue reached no pool wait")

    # -- desks and staff -----------------------------------------------------------------------------------------

    @rule(
        job=st.sampled_from(JOB_IDS),
        pin=st.integers(min_value=-1, max_value=4),
        zone=st.sampled_from((None, *sorted(ZONES))),
    )
    def enqueue(self, job: str, pin: int, zone: str | None = None) -> None:
        """A desk adds a badge: to the pool or pinned to a printer (4: the IPP printer, when there is one), and of a
        zone or none (a zone's badge goes to a printer outside its zone only when none of the zone's can print:
        steal, release, reclaim and drain read it)."""
        printer = f"p{pin}" if 0 <= pin < len(self.agents) else None
        if pin == 4 and self.holder is not None:
            printer = HOLDER
        if printer is not None:
            # A pinned job is indexed by its Redis-time millisecond: two in the same one would tie, and which a steal
            # takes would depend on the pace of the run, which no replay could repeat.
            time.sleep(0.0015)
        fields = {"job_id": job, "attendee_id": job, "name": f"Attendee {job}", "printer": printer}
        if zone is not None:
            fields.update(zone=zone, zone_printers=" ".join(ZONES[zone]))
        payload = parse_job(fields)
        added = self._run(self.desk.enqueue(job, payload.payload(), printer, zone=payload.zoned))
        self._note(("enqueue (pinned)" if printer else "enqueue") + (" (zone)" if zone else ""))
        if added.added:
            self.acked.append(job)
        else:
            self._note("enqueue (duplicate)")
        self._settle_all()

    @rule(job=st.sampled_from(JOB_IDS), reprint=st.booleans())
    def staff(self, job: str, reprint: bool) -> None:
        """Staff reprint a badge on purpose (coffee on it), or cancel one no printer has taken."""
        if reprint:
            result = self._run(self.desk.reprint(job, "coffee on it", "desk", 100, False))
            if result.kind == "reprint":
                self.reprints += 1
            self._note(f"reprint ({result.kind})")
        else:
            cancelled = self._run(self.desk.cancel(job, "desk"))
            self._note(f"cancel ({cancelled.kind})")
        self._settle_all()

    @rule(
        job=st.sampled_from(JOB_IDS),
        field=st.sampled_from(("attempts", "epoch", "reclaims")),
        value=st.sampled_from(WORDS),
    )
    def corrupt(self, job: str, field: str, value: str) -> None:
        """A role user (a kiosk's HSET) writes a value the scripts cannot count with into a job not taken yet: the
        printer that takes it dead-letters it with the field named and goes on, and every invariant still holds."""
        key = self.keys.job(job)
        if self._run(self.admin.hget(key, "state")) != b"queued":
            return
        self._run(self.admin.hset(key, field, value))
        self._note(f"corrupt {field}")
        self._settle_all()

    @rule(counter=st.sampled_from(COUNTED), value=st.sampled_from(WORDS))
    def corrupt_counter(self, counter: str, value: str) -> None:
        """A role user (the intake's, a kiosk's HSET) writes a value no step can count with into a stats counter:
        the next step that counts there restarts it with an integrity_fault event and goes on; every other
        invariant still holds, and the counter equals its events from that restart on."""
        self._run(self.admin.hset(self.keys.stats, counter, value))
        self._note(f"corrupt stats {counter}")
        self._settle_all()

    @precondition(lambda self: len(self.boxes) < len(BOX_IDS))
    @rule(data=st.data(), size=st.integers(min_value=1, max_value=BOX_MAX), only=st.integers(-1, 3))
    def add_box(self, data: st.DataObject, size: int, only: int) -> None:
        """A desk adds a box of pre-printed badges (a group): claimed whole by one ready printer (any, or the one
        named), printed in order after door badges, handed on whole from a printer that dies or is drained. (A box
        added twice changes nothing: tests/core/test_groups.py.)"""
        box = data.draw(st.sampled_from([b for b in BOX_IDS if b not in self.boxes]))
        printers = (f"p{only}",) if 0 <= only < len(self.agents) else ()
        jobs = [f"{box}.{i}" for i in range(size)]
        added = self._run(self._add_box(box, jobs, printers))
        self._note(f"box added ({added.kind})" + (" for one printer" if printers else ""))
        if added.kind == "added":
            self.boxes[box] = (jobs, printers)
            self.acked += jobs
        self._settle_all()

    async def _add_box(self, box: str, jobs: list[str], printers: tuple[str, ...]) -> Any:
        group = []
        for i, job_id in enumerate(jobs):
            payload = parse_job({"job_id": job_id, "attendee_id": job_id, "name": f"Person {job_id}"}).payload()
            kind = "separator" if i == 0 else "preprint"
            group.append((enc(job_id), enc(payload), enc(json.dumps({"kind": kind})), enc(f"Person {job_id}")))
        return await self.desk.add_group(box, group, printers, CONT)

    @rule(data=st.data(), drain=st.booleans())
    def operator(self, data: st.DataObject, drain: bool) -> None:
        """An operator drains a printer (it begins nothing new; its pinned jobs go to the pool), or resumes it."""
        printer = data.draw(st.sampled_from(sorted(self.agents)))

        async def go() -> None:
            if drain and await self.admin.get(self.keys.control(printer)) != b"drain":
                held = await self.admin.lrange(self.keys.inflight(printer), 0, -1)
                self.drain_inflight[printer] = {raw.decode() for raw in held}
            await self.desk.drain(printer, "drain" if drain else "resume", "ops")

        self._run(go())
        self._note("drain" if drain else "resume")
        self._settle_all()

    # -- the pull loops ------------------------------------------------------------------------------------------

    def _at(self, kind: str) -> list[str]:
        return self._live(lambda a: a.gate is not None and a.gate.kind == kind and not a.gate.go.done())

    def _at_step(self) -> list[str]:
        return self._live(lambda a: a.gate is not None and a.gate.kind != "print" and not a.gate.go.done())

    @precondition(lambda self: bool(self._at_step()))
    @rule(data=st.data(), how=st.sampled_from((RUN, RUN, RUN, RUN, LOSE_REQUEST, LOSE_REPLY)))
    def step(self, data: st.DataObject, how: str) -> None:
        """One agent's loop does its next Redis call (or pause); now and then the connection drops around it."""
        self._advance(data.draw(st.sampled_from(self._at_step())), how)

    def _advance(self, name: str, how: str) -> None:
        """Let one agent's loop past the Redis call (or pause) it waits at, checking begin's promises."""
        agent = self.agents[name]
        gate = agent.gate
        assert gate is not None
        if gate.kind == "wait":
            how = RUN
        self._note(f"{gate.kind} {gate.name}" + ("" if how == RUN else f" ({how})"))
        check = self._run(self._before_begin(name, gate.args[2])) if gate.name == "begin" else None
        replies = len(agent.replies)
        agent.release(how)
        self._settle_all()
        if check is not None:
            for call, args, reply in agent.replies[replies:]:
                if call == "begin" and reply.kind is BeginKind.PRINT:
                    self._after_begin(name, args[2], *check)

    @precondition(lambda self: bool(self._at_step()))
    @rule(data=st.data())
    def step_again(self, data: st.DataObject) -> None:
        self.step(data, RUN)

    @precondition(lambda self: bool(self._at_step()))
    @rule(data=st.data())
    def step_once_more(self, data: st.DataObject) -> None:
        self.step(data, RUN)

    @precondition(lambda self: bool(self._at_step()))
    @rule(data=st.data())
    def step_on(self, data: st.DataObject) -> None:
        self.step(data, RUN)

    @precondition(lambda self: bool(self._at_step()))
    @rule(data=st.data())
    def step_further(self, data: st.DataObject) -> None:
        self.step(data, RUN)

    async def _before_begin(self, printer: str, job_id: str) -> tuple[bool, bool]:
        owned = await self.admin.lpos(self.keys.inflight(printer), job_id) is not None
        drained = await self.admin.get(self.keys.control(printer)) == b"drain"
        return owned, drained

    def _after_begin(self, printer: str, job_id: str, owned: bool, drained: bool) -> None:
        if not owned:
            self.violations.append(f"{printer} began {job_id}, which was not in its in-flight list")
        if drained and job_id not in self.drain_inflight.get(printer, set()):
            self.violations.append(f"{printer} began {job_id}, taken after an operator drained it")

    @precondition(lambda self: bool(self._at("print")))
    @rule(
        data=st.data(),
        outcome=st.sampled_from((Outcome.PRINTED, Outcome.PRINTED, Outcome.FAILED, Outcome.UNKNOWN)),
        came_out=st.booleans(),
    )
    def printer_outcome(self, data: st.DataObject, outcome: Outcome, came_out: bool) -> None:
        """The printer says what happened; with "unknown", the model decides what physically came out."""
        name = data.draw(st.sampled_from(self._at("print")))
        agent = self.agents[name]
        assert agent.gate is not None
        job_id = str(agent.gate.args[0])
        out = outcome is Outcome.PRINTED or (outcome is Outcome.UNKNOWN and came_out)
        self._note(f"printer {outcome.value}" + (" (came out)" if outcome is Outcome.UNKNOWN and came_out else ""))
        if out:
            self._came_out(Copy(job_id, name, agent.sending_epoch, agent.sending_round))
        agent.release(verdict(outcome))
        self._settle_all()

    @precondition(lambda self: bool(self._at("print")))
    @rule(data=st.data())
    def printer_prints(self, data: st.DataObject) -> None:
        self.printer_outcome(data, Outcome.PRINTED, True)

    @precondition(lambda self: bool(self._at("print")))
    @rule(data=st.data())
    def printer_prints_again(self, data: st.DataObject) -> None:
        self.printer_outcome(data, Outcome.PRINTED, True)

    @precondition(lambda self: bool(self._at("print")))
    @rule(data=st.data())
    def printer_goes_silent(self, data: st.DataObject) -> None:
        """The printer stops answering after the last byte, and the label did come out: the case flags exist for."""
        self.printer_outcome(data, Outcome.UNKNOWN, True)

    @precondition(lambda self: bool(self._live(lambda a: a.popping)))
    @rule(data=st.data())
    def pop_timeout(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self._live(lambda a: a.popping)))
        agent = self.agents[name]
        unblocked = self._run(self.admin.execute_command("CLIENT", "UNBLOCK", agent.pop_client_id, "TIMEOUT"))
        if unblocked != 1:
            self.world.failures.append(f"the model lost track of {name}'s pool wait (client {agent.pop_client_id})")
            raise AssertionError(self.world.failures[-1])
        self._note("pool wait times out")
        self._settle_all()

    @rule(data=st.data())
    def let_steal(self, data: st.DataObject) -> None:
        """The affinity window of the pinned jobs ends: this agent, when idle, looks for one to steal."""
        candidates = self._live(lambda a: not a.may_steal)
        if not candidates:
            return
        self.agents[data.draw(st.sampled_from(candidates))].may_steal = True
        self._note("steal window")

    # -- liveness and faults -------------------------------------------------------------------------------------

    @rule(data=st.data())
    def beat(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.agents)))
        agent = self.agents[name]
        if agent.frozen:
            return
        self._run(agent.beat())
        self.stale.discard(name)
        self._note("heartbeat")
        self._settle_all()

    @rule(data=st.data(), fault=st.sampled_from(("cut off", "freeze", "crash, journal kept", "crash, journal lost")))
    def agent_fault(self, data: st.DataObject, fault: str) -> None:
        """An agent loses its heartbeat (cut off, or frozen as a zombie), or crashes and starts again."""
        if fault.startswith("crash"):
            self.crash(data, fault == "crash, journal kept")
        else:
            self.lose_heartbeat(data, fault == "freeze")

    def lose_heartbeat(self, data: st.DataObject, freeze: bool) -> None:
        """No beat for the dead-after window: cut off (the loop goes on), or frozen (a zombie, until it wakes)."""
        name = data.draw(st.sampled_from(sorted(self.agents)))
        agent = self.agents[name]
        agent.lose_lease()
        self.stale.add(name)
        if freeze:
            agent.frozen = True
        self._note("freeze" if freeze else "heartbeat lost")

    @precondition(lambda self: any(a.frozen for a in self.agents.values()))
    @rule(data=st.data())
    def wake(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(n for n, a in self.agents.items() if a.frozen)))
        self.agents[name].frozen = False
        self._note("zombie wakes")
        self._settle_all()

    @precondition(lambda self: bool(self.stale))
    @rule(data=st.data())
    def reclaim(self, data: st.DataObject) -> None:
        victim = data.draw(st.sampled_from(sorted(self.stale)))
        by = data.draw(st.sampled_from(sorted(set(self.agents) - {victim})))
        result = self._run(self.agents[by].heart.reclaim(victim, by, 0))
        self._note(f"reclaim ({result.kind})")
        self._settle_all()

    def _in_hand_gates(self) -> list[str]:
        return sorted(n for n, a in self.agents.items() if a.gate is not None and a.gate.job_id is not None)

    @precondition(lambda self: bool(self._in_hand_gates()))
    @rule(data=st.data())
    def reclaimed_in_hand(self, data: st.DataObject) -> None:
        """The worst moment for a freeze: a printer holding a job (about to begin, print, confirm or release it) stops
        beating, and a peer reclaims its work before it goes on."""
        victim = data.draw(st.sampled_from(self._in_hand_gates()))
        self.agents[victim].lose_lease()
        self.stale.add(victim)
        by = data.draw(st.sampled_from(sorted(set(self.agents) - {victim})))
        result = self._run(self.agents[by].heart.reclaim(victim, by, 0))
        self._note(f"reclaimed while in hand ({result.kind})")
        self._settle_all()

    def _at_printer_with_peer(self) -> list[str]:
        return self._at("print") if len(self.agents) > 1 else []

    def _drive_to_printer(self, name: str, job_id: str) -> bool:
        """Run one agent's steps (each as the step rule would) until it waits at its printer with ``job_id``."""
        agent = self.agents[name]
        for _ in range(12):
            gate = agent.gate
            if gate is None or gate.go.done() or (gate.job_id is not None and gate.job_id != job_id):
                return False
            if gate.kind == "print":
                return True
            self._advance(name, RUN)
        return False

    def _fresh_jobs(self) -> list[str]:
        return [job for job in JOB_IDS if job not in self.acked]

    @precondition(lambda self: len(self._live(lambda a: a.popping)) >= 2 and bool(self._fresh_jobs()))
    @rule(data=st.data())
    def zombie_at_printer(self, data: st.DataObject) -> None:
        """A desk sends a new job; the agent that gets it runs straight to its printer, and there freezes (below)."""
        idle = self._live(lambda a: a.popping)
        self.enqueue(data.draw(st.sampled_from(self._fresh_jobs())), -1)
        taker = [name for name in idle if not self.agents[name].popping]
        job = self.acked[-1] if self.acked else ""
        if len(taker) == 1 and self._drive_to_printer(taker[0], job):
            how = data.draw(st.sampled_from(("peer prints", "printer silent", "late confirm", "reprint")))
            if how == "peer prints":
                self._freeze_at_printer(taker[0], data)
            elif how == "printer silent":
                self._silent_then_peer(taker[0], job)
            elif how == "late confirm":
                self._late_confirm(taker[0], job, data)
            else:
                self._reprint_while_a_peer_holds_it(taker[0], job, data)

    def _late_confirm(self, name: str, job_id: str, data: st.DataObject) -> None:
        """Every peer is busy (their pool waits end), so the reclaimed job waits in the pool when the zombie wakes,
        its printer prints, and its late confirm must take that copy out of the pool."""
        for peer in self._live(lambda a: a.popping):
            self._run(self.admin.execute_command("CLIENT", "UNBLOCK", self.agents[peer].pop_client_id, "TIMEOUT"))
        self._settle_all()
        self._freeze_at_printer(name, data)
        self.agents[name].frozen = False
        self._note("zombie wakes, prints, confirms late")
        self._zombie_prints_and_confirms(name, job_id)

    def _reprint_while_a_peer_holds_it(self, name: str, job_id: str, data: st.DataObject) -> None:
        """The first peer waiting on the pool pops the reclaimed job and holds it, unbegun, while the zombie wakes,
        prints and confirms late: that confirm voids the pool copy but cannot name the peer's list, so the printed
        job's id lies there until the peer's begin drops it. Staff reprint the badge then: the new round must be in
        one place, or the peer's begin would print it beside the round's copy in the pool."""
        holder = self._freeze_at_printer(name, data, peer_prints=False)
        self.agents[name].frozen = False
        if holder is not None and self._zombie_prints_and_confirms(name, job_id):
            self._note("zombie confirms late while a peer holds the job, staff reprint it")
            self.staff(job_id, reprint=True)

    def _zombie_prints_and_confirms(self, name: str, job_id: str) -> bool:
        """The woken agent's printer prints ``job_id`` and the agent confirms it (False: it is not at its printer with
        that job any more)."""
        agent = self.agents[name]
        gate = agent.gate
        if gate is None or gate.kind != "print" or gate.job_id != job_id:
            return False
        self._came_out(Copy(job_id, name, agent.sending_epoch, agent.sending_round))
        agent.release(verdict(Outcome.PRINTED))
        self._settle_all()
        gate = agent.gate
        if gate is not None and not gate.go.done() and gate.name in ("confirm", "confirm_then_take"):
            self._advance(name, RUN)
        return True

    def _silent_then_peer(self, name: str, job_id: str) -> None:
        """The printer stops answering after the last byte, though the label came out; the agent releases the job as
        unknown and the peer the pool hands it to prints it: the second copy must carry where the first may be."""
        idle = self._live(lambda a: a.popping)
        agent = self.agents[name]
        self._note("printer unknown (came out), a peer prints it next")
        self._came_out(Copy(job_id, name, agent.sending_epoch, agent.sending_round))
        agent.release(verdict(Outcome.UNKNOWN))
        self._settle_all()
        gate = agent.gate
        if gate is not None and not gate.go.done() and gate.name == "release":
            self._advance(name, RUN)
        got = [peer for peer in idle if not self.agents[peer].popping]
        if len(got) == 1:
            self._peer_prints(got[0], job_id, None, None)

    @precondition(lambda self: bool(self._at_printer_with_peer()))
    @rule(data=st.data())
    def frozen_at_printer(self, data: st.DataObject) -> None:
        self._freeze_at_printer(data.draw(st.sampled_from(self._at_printer_with_peer())), data)

    def _freeze_at_printer(self, victim: str, data: st.DataObject, peer_prints: bool = True) -> str | None:
        """The rarest hard chain, made common: an agent freezes with its badge at the printer (sent, not yet
        settled) and a peer reclaims its work at once. The job is back in the pool for a peer to take and print
        while the zombie sleeps; when it wakes, its printer says what came out and its confirm or release is late.
        Two copies of one round then come out at two printers, and only the reclaim's flag and confirm's NX keep
        the second one flagged."""
        agent = self.agents[victim]
        job_id = agent.gate.job_id if agent.gate is not None else None
        agent.lose_lease()
        agent.frozen = True
        self.stale.add(victim)
        idle = self._live(lambda a: a.popping)
        peers = idle or sorted(set(self.agents) - {victim})
        by = data.draw(st.sampled_from(peers))
        result = self._run(self.agents[by].heart.reclaim(victim, by, 0))
        self._note(f"frozen at the printer, reclaimed ({result.kind})")
        self._settle_all()
        got = [name for name in idle if not self.agents[name].popping]  # the pool hands it to the first waiting
        if len(got) == 1 and job_id is not None and peer_prints:
            self._peer_prints(got[0], job_id, victim, data)
        return got[0] if len(got) == 1 else None

    def _peer_prints(self, name: str, job_id: str, zombie: str | None, data: st.DataObject | None) -> None:
        """The peer waiting on the pool gets the reclaimed job and runs its own steps up to the printer, which
        prints it, and on until it has confirmed: all before the zombie wakes (or, drawn so, while it sleeps on)."""
        peer = self.agents[name]
        if not self._drive_to_printer(name, job_id):
            return
        self._note("peer prints the reclaimed job")
        self._came_out(Copy(job_id, name, peer.sending_epoch, peer.sending_round))
        peer.release(verdict(Outcome.PRINTED))
        self._settle_all()
        gate = peer.gate
        if gate is not None and not gate.go.done() and gate.name in ("confirm", "confirm_then_take"):
            self._advance(name, RUN)
        if zombie is not None and data is not None and data.draw(st.booleans()):
            self.agents[zombie].frozen = False
            self._note("zombie wakes")
        self._settle_all()

    def crash(self, data: st.DataObject, journal_kept: bool) -> None:
        """The agent dies wherever it is and starts again, with its journal file, or on a new disk and boot."""
        name = data.draw(st.sampled_from(sorted(self.agents)))
        old = self.agents.pop(name)
        if old.gate is not None and old.gate.kind == "print" and data.draw(st.booleans()):
            # It died with the badge at the printer, which finished it: a copy is out that nobody confirmed.
            self._came_out(Copy(str(old.gate.args[0]), name, old.sending_epoch, old.sending_round))
            self._note("crash while printing (came out), journal " + ("kept" if journal_kept else "lost"))
        self._run(old.stop())
        if not journal_kept:
            old.journal_path.unlink(missing_ok=True)
            self.boots[name] = uuid.uuid4().hex
        self._new_agent(name)
        self.stale.add(name)  # the new process has not beaten yet: no lease
        self._note("crash, journal kept" if journal_kept else "crash, journal lost")
        self._settle_all()

    # -- what came out of a printer -------------------------------------------------------------------------------

    def _came_out(self, copy: Copy) -> None:
        """A badge physically came out. One of a box is checked at that moment: it came out at the printer holding
        the box's claim, in the box's order (never before a badge of the box that printer printed earlier), or at a
        printer the box was handed on from, which the hand-back named on the badge (its first unconfirmed one)."""
        self.copies.append(copy)
        placed = box_of(copy.job_id)
        if placed is None or copy.round_epoch != 0:
            return  # a staff reprint's round goes where staff send it, not with the box
        box, place = placed
        claimed_by, where = self._run(self._box_claim(box, copy.job_id))
        if claimed_by == copy.printer:
            last = self.box_last.get(box, -1)
            if place < last:
                self.violations.append(f"{copy.job_id} came out at {copy.printer} after {box}.{last}: out of order")
            self.box_last[box] = place
            self.world.coverage[
                "box badge came out at its claim" + (" (box handed on before)" if "(" in where else "")
            ] += 1
        elif f"{copy.printer} (" in where:
            self.world.coverage["box badge came out where the box was handed on from"] += 1
        else:
            self.violations.append(
                f"{copy.job_id} came out at {copy.printer} while {box} was claimed by {claimed_by or 'nobody'}, and "
                f"no hand-back named {copy.printer} on it (maybe_printed_where {where!r})"
            )

    async def _box_claim(self, box: str, job_id: str) -> tuple[str, str]:
        """Who holds the box's claim now ("" when it waits), and where its badge ``job_id`` may be on paper."""
        async with self.admin.pipeline(transaction=False) as pipe:
            pipe.hmget(self.keys.group(box), "state", "printer")
            pipe.hget(self.keys.job(job_id), "maybe_printed_where")
            (state, printer), where = await pipe.execute()
        claimed_by = printer.decode() if state == b"claimed" and printer else ""
        return claimed_by, (where or b"").decode()

    # -- the IPP printer: holds the next badge while one prints (its agent's steps are the model's) --------------

    async def _holder_beat(self, first: bool) -> None:
        assert self.holder is not None
        await self.holder.beat(HOLDER, {"state": "ready", "location": HOLDER_PLACE}, 60_000, first)

    def _holder_can(self, what: str) -> bool:
        if self.holder is None:
            return False
        held = self.holder_held
        if what == "take":
            return len(held) < ROOM[HOLDER]
        if what == "begin":
            return any(not h.begun for h in held)
        return bool(held) and held[0].begun  # "print": the oldest, sent, prints first

    @precondition(lambda self: self._holder_can("take"))
    @rule()
    def holder_take(self) -> None:
        """The IPP printer's agent takes the next job, with room for two (the badge printing and the next, waiting at
        the printer); with nothing of its own, in the pool or held, it claims a waiting box and takes its first."""
        holder = self.holder
        assert holder is not None

        async def go() -> tuple[str, Any]:
            taken = await holder.take(HOLDER, room=ROOM[HOLDER])
            if taken is None and not self.holder_held:
                claimed = await holder.claim_group(HOLDER)
                if claimed is not None and claimed.kind.value == "claimed":
                    return "claimed", await holder.take(HOLDER, room=ROOM[HOLDER])
            return "", taken

        claimed, taken = self._run(go())
        source = taken.source.value if taken is not None else "nothing"
        self._note(f"ipp take, room 2 ({source})" + (" after a claim" if claimed else ""))
        if taken is not None and taken.source not in (Source.HELD, Source.DRAINED):
            self.holder_held.append(Held(taken.job_id))
        self._settle_all()

    @precondition(lambda self: self._holder_can("begin"))
    @rule()
    def holder_begin(self) -> None:
        """The IPP printer's agent begins the next job it holds and hands it to the printer (behind the one printing,
        when one prints)."""
        holder = self.holder
        assert holder is not None
        held = next(h for h in self.holder_held if not h.begun)
        owned, drained = self._run(self._before_begin(HOLDER, held.job_id))
        begun = self._run(holder.begin(HOLDER, HOLDER_PLACE, held.job_id))
        self._note(f"ipp begin ({begun.kind.value})" + (" behind another" if held is not self.holder_held[0] else ""))
        if begun.kind is BeginKind.PRINT:
            self._after_begin(HOLDER, held.job_id, owned, drained)
            held.begun, held.epoch = True, begun.epoch
            held.round_epoch = int(self._run(self.admin.hget(self.keys.job(held.job_id), "round_epoch")) or 0)
        else:
            self.holder_held.remove(held)
        self._settle_all()

    @precondition(lambda self: self._holder_can("print"))
    @rule(
        outcome=st.sampled_from((Outcome.PRINTED, Outcome.PRINTED, Outcome.FAILED, Outcome.UNKNOWN)),
        came_out=st.booleans(),
    )
    def holder_prints(self, outcome: Outcome, came_out: bool) -> None:
        """The IPP printer says what happened to the badge printing; when it did not print, the one waiting behind it
        is withdrawn (cancelled at the printer before it started) and goes back unsent."""
        holder = self.holder
        assert holder is not None
        held = self.holder_held.pop(0)
        if outcome is Outcome.PRINTED or (outcome is Outcome.UNKNOWN and came_out):
            self._came_out(Copy(held.job_id, HOLDER, held.epoch, held.round_epoch))

        async def settle() -> None:
            if outcome is Outcome.PRINTED:
                await holder.confirm(HOLDER, HOLDER_PLACE, held.job_id, held.epoch)
                return
            how = "unknown" if outcome is Outcome.UNKNOWN else "failed"
            await holder.release(HOLDER, HOLDER_PLACE, held.job_id, how, "model", 5)
            for waiting in self.holder_held:
                await holder.release(HOLDER, HOLDER_PLACE, waiting.job_id, "unsent", "the one before it failed", 5)
            self.holder_held.clear()

        waiting = len(self.holder_held)
        self._run(settle())
        self._note(
            f"ipp printer {outcome.value}"
            + (", the waiting one withdrawn" if waiting and outcome is not Outcome.PRINTED else "")
        )
        self._settle_all()

    @precondition(lambda self: self.holder is not None and not self.holder_held and bool(self._fresh_jobs()))
    @rule(data=st.data())
    def holder_two_at_once(self, data: st.DataObject) -> None:
        """Random steps seldom leave the IPP printer two jobs at once; this plays it: it takes (claiming a waiting box,
        one added now if drawn so) and begins, a desk sends it a door badge, and it takes and begins that one too,
        each the step its own rule takes. What the printer says, or the agent's death, comes from the usual rules."""
        if len(self.boxes) < len(BOX_IDS) and data.draw(st.booleans()):
            self.add_box(data, BOX_MAX, -1)
        self.holder_take()
        if self._holder_can("begin"):
            self.holder_begin()
        self.enqueue(data.draw(st.sampled_from(self._fresh_jobs())), 4)
        for _ in range(2):
            if self._holder_can("take"):
                self.holder_take()
            if self._holder_can("begin"):
                self.holder_begin()
        self._note(f"ipp holds {len(self.holder_held)}")

    @precondition(lambda self: bool(self.holder_held) and len(self.agents) > 0)
    @rule(data=st.data())
    def holder_dies(self, data: st.DataObject) -> None:
        """The IPP printer's agent dies holding what it holds (one of a box, a door badge waiting behind it); each
        badge it had sent may have come out. A peer reclaims: a box goes on whole from its badge in hand, flagged,
        the rest to the pool flagged with this printer's place. The agent then starts afresh, holding nothing."""
        holder = self.holder
        assert holder is not None
        for held in self.holder_held:
            if held.begun and data.draw(st.booleans()):
                self._came_out(Copy(held.job_id, HOLDER, held.epoch, held.round_epoch))
        by = data.draw(st.sampled_from(sorted(self.agents)))
        result = self._run(self.agents[by].heart.reclaim(HOLDER, by, 0))
        self._note(f"ipp dies holding {len(self.holder_held)}, reclaimed ({result.kind.value})")
        self.holder_held = []
        self._run(self._holder_beat(first=True))
        self._settle_all()
        if data.draw(st.booleans()):
            self._a_peer_prints_what_was_handed_on()

    def _a_peer_prints_what_was_handed_on(self) -> None:
        """The first printer waiting on the pool stops waiting (its wait times out) and runs its own steps, each as
        the step rule would, every badge printing: it takes what the reclaim put in the pool, claims the box handed
        on and prints it through, until it waits on the pool again."""
        idle = self._live(lambda a: a.popping)
        if not idle:
            return
        name = idle[0]
        agent = self.agents[name]
        self._run(self.admin.execute_command("CLIENT", "UNBLOCK", agent.pop_client_id, "TIMEOUT"))
        self._settle_all()
        for _ in range(40):
            gate = agent.gate
            if agent.popping or gate is None or gate.go.done():
                break
            if gate.kind == "print":
                self._came_out(Copy(str(gate.args[0]), name, agent.sending_epoch, agent.sending_round))
                agent.release(verdict(Outcome.PRINTED))
                self._settle_all()
            else:
                self._advance(name, RUN)
        self._note("a peer prints what was handed on")

    @rule(fault=st.sampled_from(("snapshot", "snapshot", "snapshot", "restart", "failover", "failover")))
    def redis_fault(self, fault: str) -> None:
        """A replica snapshot (what a later failover keeps), a Redis restart (nothing lost), or a failover."""
        if fault == "snapshot":
            self.take_snapshot()
        elif fault == "failover" and self.snapshot is not None and self.holder is None:
            # Not with the model's IPP printer: its agent has no journal to confirm or flag again after a master
            # move (agent/recovery.py does that for the loops' printers).
            self.failover()
        elif fault == "restart":
            self.restart_redis()

    def restart_redis(self) -> None:
        self.world.server.restart()
        self._run(self._reconnect_model())
        self._note("redis restart")
        self._settle_all()

    def take_snapshot(self) -> None:
        """A replica as of now: a later failover to it loses every write after this step."""

        async def dump() -> list[tuple[bytes, int, bytes]]:
            keys = [key async for key in self.admin.scan_iter(match=f"{self.keys.prefix}*", count=500)]
            # One round trip (a pipeline, each command its own as before: nothing else moves meanwhile).
            pipe = self.admin.pipeline(transaction=False)
            for key in keys:
                pipe.dump(key)
                pipe.pttl(key)
            replies = await pipe.execute()
            out = []
            for key, value, ttl in zip(keys, replies[::2], replies[1::2], strict=True):
                if value is not None:
                    out.append((key, max(0, int(ttl)), value))
            return out

        self.snapshot = Snapshot(
            self._run(dump()),
            list(self.acked),
            self.reprints,
            {p: set(ids) for p, ids in self.drain_inflight.items()},
        )
        self._note("replica snapshot")

    def failover(self) -> None:
        """Sentinel promotes the replica of the last snapshot: every write since is gone, except the desks'
        enqueues, which the desk re-checks (and re-sends) after a master change."""
        snap = self.snapshot
        assert snap is not None
        lost = self.acked[len(snap.acked) :]

        async def promote() -> None:
            keys = [key async for key in self.admin.scan_iter(match=f"{self.keys.prefix}*", count=500)]
            # One round trip; not a transaction: the server runs each command on its own, in order, as one by one
            # (a pool wait the restored pool wakes is handed its job between two of them, as before).
            pipe = self.admin.pipeline(transaction=False)
            if keys:
                pipe.delete(*keys)
            for key, ttl, value in snap.dumps:
                pipe.restore(key, ttl, value, replace=True)
            await pipe.execute()
            for agent in self.agents.values():
                pool = agent.redis.connection_pool
                pool.changes = getattr(pool, "changes", 0) + 1  # type: ignore[attr-defined]
            await self.admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
            await self._reconnect_model()

        self._run(promote())
        for name, agent in self.agents.items():
            journal = agent.journal
            self.reflag_due[name] = {job for job, _ in journal.recent_unknown(RECONFIRM_AFTER_FAILOVER)} | {
                job for job, _ in journal.recent_prints(RECONFIRM_AFTER_FAILOVER)
            }
        self.acked = list(snap.acked)
        self.reprints = snap.reprints
        self.drain_inflight = {p: set(ids) for p, ids in snap.drain_inflight.items()}
        self.failovers += 1
        self._note("failover (lost writes)")
        self.box_last = {}
        self._settle_all()
        for box, (jobs, printers) in sorted(self.boxes.items()):
            if jobs[0] in lost:  # the desk sends the box again, whole, as it sent it
                added = self._run(self._add_box(box, jobs, printers))
                if added.kind == "added":
                    self.acked += jobs
        for job in lost:
            if box_of(job) is not None:
                continue
            payload = parse_job({"job_id": job, "attendee_id": job, "name": f"Attendee {job}"})
            added = self._run(self.desk.enqueue(job, payload.payload(), None))
            if added.added:
                self.acked.append(job)
        self._settle_all()

    # -- the invariants (docs/design.md, "The protocol as a specification") --------------------------------------

    def _read(self) -> dict[str, Any]:
        """Everything the invariants look at, in one round trip and one consistent moment (state.lua)."""
        k = self.keys
        names = ["pool", "dlq"]
        for printer in self._printers():
            names += [f"q:{printer}", f"inflight:{printer}", f"gq:{printer}"]
        names += [f"group:{box}:q" for box in BOX_IDS]
        keys = [k.prefix + name for name in names]
        for job in ALL_JOB_IDS:
            keys += [k.job(job), k.done(job)]
        keys += [k.stats, k.events, k.pinned]
        replies = self._run(self._state(keys=keys, args=[len(names), len(ALL_JOB_IDS)]))
        lists = {name: [r.decode() for r in ids] for name, ids in zip(names, replies, strict=False)}
        rest = replies[len(names) :]
        jobs: dict[str, dict[str, str]] = {}
        for i, job in enumerate(ALL_JOB_IDS):
            raw, done = rest[2 * i], rest[2 * i + 1]
            if raw:
                jobs[job] = _pairs(raw)
                jobs[job]["_done"] = done.decode() if done is not None else ""
        stats = _pairs(rest[-3])  # as stored: corrupt_counter may have written words
        events = [_pairs(fields) for _, fields in rest[-2]]
        pinned = [(member, float(score)) for member, score in zip(rest[-1][::2], rest[-1][1::2], strict=True)]
        return {"lists": lists, "jobs": jobs, "stats": stats, "events": events, "pinned": pinned}

    @invariant()
    def check(self) -> None:
        try:
            self._check()
        except AssertionError as exc:
            self.world.failures.append(str(exc))
            raise

    def _check(self) -> None:
        if not self.agents:
            return
        self._reflagged()
        seen = self._read()
        lists, jobs, stats, events = seen["lists"], seen["jobs"], seen["stats"], seen["events"]
        self._one_place(lists, jobs)
        self._no_acked_job_lost(jobs)
        self._done_only_after_a_confirmed_print(jobs)
        self._second_copies_flagged(jobs, events)
        assert not self.violations, self.violations
        self._reprints_counted(stats, events)
        self._stats_equal_events(stats, events)
        self._pinned_index_exact(lists, jobs, seen["pinned"])

    def _pinned_index_exact(
        self, lists: dict[str, list[str]], jobs: dict[str, dict[str, str]], index: list[tuple[bytes, float]]
    ) -> None:
        queues = {name[2:]: [i.encode() for i in ids] for name, ids in lists.items() if name.startswith("q:")}
        problems = pinned_index_mismatch([member for member, _ in index], queues)
        for member, score in index:
            _, job_id = split_pinned_member(member.decode())
            enqueued = jobs.get(job_id, {}).get("enqueued_ms")
            if enqueued is None or int(enqueued) != score:
                problems.append(f"{member.decode()} scored {score}, enqueued_ms {enqueued!r}")
        assert problems == [], problems

    def _one_place(self, lists: dict[str, list[str]], jobs: dict[str, dict[str, str]]) -> None:
        places: dict[str, list[str]] = {}
        for name, ids in lists.items():
            if name.startswith("inflight:"):
                room = ROOM.get(name.removeprefix("inflight:"), 1)
                assert len(ids) <= room, f"{name} holds {ids}: that printer holds at most {room}"
                boxed = [i for i in ids if jobs.get(i, {}).get("group")]
                assert len(boxed) <= 1, f"{name} holds {boxed}: a box's badge waits behind another of a box"
            for job_id in ids:
                places.setdefault(job_id, []).append(name)
        for job_id, where in places.items():
            assert job_id in jobs, f"{job_id} is in {where} without a job record"
        for job_id, job in jobs.items():
            state, where = job["state"], places.get(job_id, [])
            if state in ("queued", "printing"):
                assert len(where) == 1 and where[0] != "dlq", f"{job_id} ({state}) is in {where}: exactly one place"
                if state == "printing":
                    assert where[0] == f"inflight:{job['printer']}", f"{job_id} printing at {job['printer']}: {where}"
            elif state == "printed" and len(where) == 1 and where[0].startswith("inflight:"):
                # A zombie's late confirm removes the reclaimed copy from the pool, but a peer may have taken it
                # already: it waits in that peer's in-flight list, and the peer's begin drops it ("skipped").
                continue
            elif state == "printed" and len(where) == 1 and job.get("group") and where[0].startswith(("group:", "gq:")):
                # Found by the model, not fixed here: a late confirm voids the pool's copy and a zone mate's queue's,
                # not the box's; a box badge handed on mid-print and then confirmed by the zombie stays in the box's
                # queue until the printer that claims the box begins it and drops it ("done", nothing printed).
                continue
            elif state == "printed" and where == ["dlq"]:
                # Found by the model: a zombie's late confirm of a job a peer's begin dead-lettered (a wrong value)
                # leaves the printed job in the DLQ, which confirm cannot name; requeue takes it out, answering
                # printed_already, and never prints it again (tests/core/test_wrong_values.py).
                continue
            elif state == "dead":
                assert where == ["dlq"], f"{job_id} is dead and in {where}: the DLQ only"
            else:
                assert where == [], f"{job_id} is {state} and still in {where}"

    def _no_acked_job_lost(self, jobs: dict[str, dict[str, str]]) -> None:
        for job_id in self.acked:
            assert job_id in jobs, f"{job_id} was acknowledged to a desk and is gone"

    def _round_copies(self, job_id: str, job: dict[str, str]) -> list[Copy]:
        round_epoch = int(job.get("round_epoch") or 0)
        return [c for c in self.copies if c.job_id == job_id and c.round_epoch == round_epoch]

    def _done_only_after_a_confirmed_print(self, jobs: dict[str, dict[str, str]]) -> None:
        for job_id, job in jobs.items():
            done = job["_done"]
            # The gate is written once a round: a second confirm of the round is a duplicate, never a new "done".
            round_epoch = job.get("round_epoch") or "0"
            before = self.done_seen.get(job_id)
            if done and before is not None and before[1] == round_epoch and before[2] == self.failovers:
                assert before[0] == done, f"{job_id}: done rewritten from {before[0]} to {done} within one round"
            if done:
                self.done_seen[job_id] = (done, round_epoch, self.failovers)
            assert (job["state"] == "printed") == bool(done), f"{job_id}: state {job['state']}, done by {done!r}"
            if done:
                printers = {c.printer for c in self._round_copies(job_id, job)}
                assert done in printers, f"{job_id} done by {done}, but this round came out only at {printers}"

    def _reflagged(self) -> None:
        """Forget the jobs of a printer that recovered since the master moved (or, restarted, since it started):
        its recovery flagged them again (reflag.lua). Run at every check, so a later lost track is not taken for it."""
        for name in list(self.reflag_due):
            pull = self.agents[name].pull
            if not (pull.gate.lost_track() or pull.recovery.first_run):
                del self.reflag_due[name]

    def _in_hand(self, job_id: str) -> bool:
        """A printer still settles this job: its flags are not final yet. Also a job released as unknown or printed
        before a failover by a printer not recovered since: the flag or confirm that failover lost is not written
        again yet."""
        if any(job_id in jobs for jobs in self.reflag_due.values()):
            return True
        if any(held.job_id == job_id for held in self.holder_held):
            return True
        for agent in self.agents.values():
            gate = agent.gate
            if gate is not None and gate.job_id == job_id:
                return True
            if agent.pull.printing == job_id:
                return True
        return False

    def _second_copies_flagged(self, jobs: dict[str, dict[str, str]], events: list[dict[str, str]]) -> None:
        for job_id, job in jobs.items():
            if job["state"] != "printed" or self._in_hand(job_id):
                continue
            by_round: dict[int, list[Copy]] = {}
            for c in self.copies:
                if c.job_id == job_id:
                    by_round.setdefault(c.round_epoch, []).append(c)
            for copies in by_round.values():
                if len(copies) < 2:
                    continue
                flagged = job.get("maybe_duplicate") == "1" or job.get("duplicate_print") == "1"
                assert flagged, f"{job_id} came out {len(copies)} times in one round ({copies}) without a flag"
                named = job.get("maybe_printed_where", "") + " " + job.get("printer", "")
                for e in events:
                    if e.get("job_id") == job_id and e["event"] in ("duplicate_print", "maybe_duplicate"):
                        named += " " + " ".join(e.values())
                first = copies[0].printer
                assert first in named, f"{job_id}: second copy not flagged with where the first came out ({first})"

    def _reprints_counted(self, stats: dict[str, str], events: list[dict[str, str]]) -> None:
        told = sum(1 for e in events if e["event"] == "reprint")
        assert told == self.reprints, (told, self.reprints)
        self._counter_equals_its_events("reprint", stats, events)
        for e in events:
            if e["event"] == "duplicate_print":
                copies = [c for c in self.copies if c.job_id == e["job_id"]]
                assert len(copies) >= 2, f"duplicate_print for {e['job_id']} with {len(copies)} physical copies"

    def _stats_equal_events(self, stats: dict[str, str], events: list[dict[str, str]]) -> None:
        for name in COUNTED:
            self._counter_equals_its_events(name, stats, events)

    def _counter_equals_its_events(self, name: str, stats: dict[str, str], events: list[dict[str, str]]) -> None:
        """Stats counter ``name`` equals the number of its events; a counter that restarted (a word was written
        there, corrupt_counter) equals those from its last restart on: the step that restarts it writes the
        integrity_fault event naming it before its own event, and the counter then holds that step's count. One
        that still holds a word (no step has counted there since) holds one the model wrote."""
        value = stats.get(name, "0")
        if not value.lstrip("-").isdigit():
            assert value in WORDS, f"stats {name}={value!r}: neither a count nor a word the model wrote"
            return
        since = 0
        for at, e in enumerate(events):
            if e["event"] == "integrity_fault" and e.get("key") == self.keys.stats and e.get("field") == name:
                since = at + 1
        counted = sum(1 for e in events[since:] if e["event"] == name)
        assert value == str(counted), f"stats {name}={value!r}, {counted} {name} events since its last restart"
