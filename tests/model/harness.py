"""The model's agents: a real ``Agent`` and ``PullLoop`` per printer, whose every step waits for the model's word.

The pull loop runs as it does in production, as an asyncio task. It is held at three kinds of gate, so the model
decides the interleaving and nothing depends on timing:

* every call the loop makes on its ``Store`` (take, begin, confirm, release, ...) waits until the model lets it run,
  lose its request, or lose its reply;
* the blocking pool pop (``wait_pool``) runs the real ``Store.wait_pool`` with no timeout on a connection of its own,
  so the server hands it a job exactly when the model pushes one (a model rule times it out);
* the printer (``ModelPrinter``) waits for the model to say what came out: printed, failed, or unknown (and then
  whether paper came out after all);
* ``PullLoop.wait`` (the loop's pause while something blocks it) is one step too.

What is not gated is what the model itself is: the heartbeat (the model beats for an agent, as the heartbeat task
would), the operator, the desks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry

from agent.config import AgentConfig, load_config
from agent.gate import Blocked
from agent.gate import Gate as LoopGate
from agent.journal import Journal
from agent.pull import PullLoop
from agent.runtime import Agent
from drivers.base import Badge, DeviceState, DeviceStatus, Outcome, PrintResult
from drivers.sim import SimDriver
from protocol.connection import master_changes
from protocol.keys import Keys
from protocol.library import Library
from protocol.store import Store
from tests.support.agents import write_agent_config

# Read-only calls the loop may make from another task (drawing ahead): never part of an interleaving.
UNGATED = frozenset({"peek"})

# How a gated Redis call ends.
RUN = "run"
LOSE_REQUEST = "lose request"  # the connection dropped before the server saw the call
LOSE_REPLY = "lose reply"  # the server ran it; the reply was lost with the connection


@dataclasses.dataclass
class Gate:
    """Where an agent's loop waits for the model: a Redis call, the printer, or the loop's own pause."""

    kind: str  # "call", "print", "wait"
    name: str  # the Store method, "print", or the Blocked reason
    args: tuple[Any, ...]
    go: asyncio.Future[Any]

    @property
    def job_id(self) -> str | None:
        if self.kind == "print":
            return str(self.args[0])
        if self.name in ("begin", "confirm", "confirm_then_take"):
            return str(self.args[2])
        if self.name in ("release", "dead_letter"):
            return str(self.args[2] if self.name == "release" else self.args[1])
        return None


class ModelPrinter(SimDriver):
    """A printer whose every badge waits for the model's verdict; what physically came out is the model's record."""

    def __init__(self, name: str, owner: ModelAgent) -> None:
        super().__init__(name, print_time=0.0)
        self.owner = owner

    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        owner = self.owner
        begun = [r for call, args, r in owner.replies if call == "begin" and args[2] == badge.job_id]
        owner.sending_epoch = begun[-1].epoch
        raw = await owner.heart_redis.hget(owner.keys.job(badge.job_id), "round_epoch")
        owner.sending_round = int(raw or 0)
        verdict: PrintResult = await owner.arrive("print", "print", (badge.job_id,))
        return verdict

    async def probe(self) -> DeviceStatus:
        return DeviceStatus(DeviceState.READY)

    async def cancel(self) -> None:
        """Clearing the buffer: the model's printer holds nothing back (it says at once what came out)."""


class GatedStore:
    """The pull loop's ``Store``: each coroutine method waits at a gate; everything else is the store itself."""

    def __init__(self, store: Store, owner: ModelAgent) -> None:
        self._store = store
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name in UNGATED or not inspect.iscoroutinefunction(attr):
            return attr
        owner = self._owner

        async def gated(*args: Any, **kwargs: Any) -> Any:
            how = await owner.arrive("call", name, args)
            if how == LOSE_REQUEST:
                raise RedisConnectionError("model: the request was lost with the connection")
            if name == "wait_pool":
                result = await owner.blocking_pop()
            else:
                result = await attr(*args, **kwargs)
            owner.replies.append((name, args, result))
            if name == "steal":
                owner.may_steal = False  # one look per word from the model
            if how == LOSE_REPLY:
                raise RedisConnectionError("model: the reply was lost with the connection")
            return result

        return gated


@functools.cache
def printer_config(directory: Path, url: str, name: str) -> AgentConfig:
    """One printer's agent config, written as YAML and read back by ``load_config`` (every check an agent's config
    gets) once per printer and run; each incarnation takes it with its sequence's venue and journal file. Once, not
    per agent: the file round trip was a tenth of a sequence's time."""
    return load_config(
        write_agent_config(
            directory / f"{name}.yaml",
            "model",
            url,
            name,
            timing__heartbeat_interval=30,  # a lease lasts a minute: only the model takes it away
            timing__block_timeout=0.05,
            timing__affinity_wait=0,  # a pinned job may be stolen as soon as the model lets a peer look
        )
    )


class ModelAgent:
    """One incarnation of one printer's agent (a crash starts a new one over the same journal file, or none)."""

    def __init__(
        self,
        workdir: Path,
        venue: str,
        url: str,
        name: str,
        library: Library | None,
        boot_id: str,
        config_dir: Path,
        moved: asyncio.Event,
    ) -> None:
        """``workdir``: the sequence's (the journal file); ``config_dir``: the run's (``printer_config``); ``moved``:
        set whenever this agent's loop reaches a gate, starts or ends a pool wait, or ends (``settle``)."""
        config = msgspec.structs.replace(
            printer_config(config_dir, url, name), venue=venue, journal=workdir / f"{name}.journal"
        )
        self.name = name
        self.url = url
        self.keys = Keys(venue)
        self.sending_epoch = 0  # the begin epoch and round of the badge at the printer now
        self.sending_round = 0
        self.journal_path = workdir / f"{name}.journal"
        self.gate: Gate | None = None
        self.moved = moved
        self.popping = False  # in BLMOVE on the server
        self.pop_client_id: int | None = None
        self.frozen = False
        self.may_steal = False
        self.replies: list[tuple[str, tuple[Any, ...], Any]] = []
        agent = Agent(config, ModelPrinter(name, self))  # its Redis client as in production (no retries)
        self.redis = agent.redis
        # No retries, like the agent's own client: a retry would re-send the pop on a new connection after a backoff
        # with jitter (redis-py's default), which no model could replay.
        once = Retry(NoBackoff(), 0)
        # No CLIENT SETINFO on connect, as the agent's own client (protocol/connection.py): Redis 7.0 refuses it anyway.
        self.pop_redis = Redis.from_url(
            url, decode_responses=False, single_connection_client=True, retry=once, driver_info=None
        )
        self.heart_redis = Redis.from_url(url, decode_responses=False, retry=once, driver_info=None)
        # The agent's own zone window, as its store states it (the steal look and release judge zone printers by it).
        self.store = Store(
            self.redis, venue, dedicated=True, library=library, zone_dead_after_ms=agent.store.zone_dead_after_ms
        )
        lane = self.store.scripts.lane
        if lane is not None:
            # Its look at an idle socket goes by the wall clock: never, so a dropped connection always costs the loop
            # an error and a recovery (the harder case), whatever the pace of the model.
            lane.IDLE_CHECK = float("inf")
        self.pop_store = Store(self.pop_redis, venue, library=library)
        self.heart = Store(self.heart_redis, venue, library=library)
        self.journal = Journal(self.journal_path, boot_id=boot_id)
        # The real loop from its parts (agent/pull.py), its store gated by the model; the agent's own printer, gate
        # facts (stopping, the heartbeat's lease and drain order, the printer's readiness) and listeners.
        loop_gate = LoopGate(agent.stopping, agent.heartbeat, agent.device.ready, lambda: master_changes(agent.redis))
        pull = PullLoop(
            GatedStore(self.store, self),  # type: ignore[arg-type]
            self.journal,
            agent.printer,
            loop_gate,
            agent.pull.events,
            me=agent.me,
            location=agent.location,
            # Its pauses are the model's steps (``gated_wait``): no wall-clock time has to pass in them. The loop's
            # heartbeat_interval bounds only its pause while it has no lease and its wait for Redis after an error
            # (agent/pull.py); the lease itself is the heartbeat's, by the config's interval.
            timing=msgspec.structs.replace(agent.timing, heartbeat_interval=0.0),
            max_attempts=config.jobs.max_attempts,
        )
        pull.ahead.store = self.store
        agent.pull = pull  # what the agent's snapshot reads
        agent.device.ready.set()
        self.agent = agent
        self.pull = pull
        real_wait = pull.wait

        async def gated_wait(blocked: Blocked) -> None:
            await self.arrive("wait", blocked.value, ())
            await real_wait(blocked)

        pull.wait = gated_wait  # type: ignore[method-assign]

        async def no_pause(seconds: float) -> None:
            """The loop's pauses are the model's steps: no wall-clock time has to pass."""
            await asyncio.sleep(0)

        loop_gate.sleep = no_pause  # type: ignore[method-assign]
        self.task: asyncio.Task[None] | None = None
        self.first_beat = True

    # -- the loop's side of a gate -------------------------------------------------------------------------------

    async def arrive(self, kind: str, name: str, args: tuple[Any, ...]) -> Any:
        self._keep_steal_closed()
        gate = Gate(kind, name, args, asyncio.get_running_loop().create_future())
        self.gate = gate
        self.moved.set()
        try:
            return await gate.go
        finally:
            self.gate = None

    def _keep_steal_closed(self) -> None:
        """The loop looks for a pinned job to steal only when the model lets it (not by the wall clock)."""
        self.pull._last_steal_look = (-1e12) if self.may_steal else (time.monotonic() + 1e12)

    async def blocking_pop(self) -> str | None:
        """The real ``Store.wait_pool``, blocking until the model pushes a job (or times it out)."""
        self.pop_client_id = int(await self.pop_redis.client_id())
        self.popping = True
        self.moved.set()
        try:
            return await self.pop_store.wait_pool(self.name, 0)
        finally:
            self.popping = False
            self.moved.set()

    # -- the model's side ----------------------------------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.task = loop.create_task(self.pull.run(), name=f"pull {self.name}")
        self.task.add_done_callback(lambda _: self.moved.set())

    def release(self, value: Any) -> None:
        assert self.gate is not None
        self.gate.go.set_result(value)

    def at_rest(self) -> bool:
        """True while the loop waits at a gate, or has ended (raising if it crashed); a pool wait is asked of the
        server (``settle``)."""
        if self.task is None:
            return True
        if self.task.done():
            if not self.task.cancelled() and self.task.exception() is not None:
                raise AssertionError(f"{self.name}: the pull loop crashed") from self.task.exception()
            return True
        return self.gate is not None and not self.gate.go.done()

    async def settle(self, admin: Redis) -> None:
        await settle([self], admin)

    async def beat(self) -> None:
        """What the heartbeat task does with one beat (agent/runtime.py): the lease, declared dead, the drain order."""
        agent = self.agent
        ttl_ms = int(agent.timing.heartbeat_interval * (agent.timing.dead_after_misses + 2) * 1000)
        started = time.monotonic()
        beat = await self.heart.beat(self.name, agent.snapshot().health(), ttl_ms, self.first_beat)
        self.first_beat = False
        heartbeat = agent.heartbeat
        heartbeat.last_beat_ok = started
        if heartbeat.beating_since is None:
            heartbeat.beating_since = started
        if beat.was_declared_dead:
            heartbeat.declared_dead += 1
        heartbeat.drained = beat.order == "drain"

    def lose_lease(self) -> None:
        """No beat for long enough that peers may declare this agent dead: its lease is gone."""
        self.agent.heartbeat.last_beat_ok = None
        self.agent.heartbeat.beating_since = None

    async def stop(self) -> None:
        """A crash: the process is gone at whatever point it was (its journal file stays as it was written)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        self.pull.ahead.cancel()
        self.journal.close()
        for client in (self.redis, self.pop_redis, self.heart_redis):
            await client.aclose()


async def settle(agents: Iterable[ModelAgent], admin: Redis, timeout: float = 20.0) -> None:
    """Run until every loop waits at its next gate, sits in BLMOVE on the server, or has ended: all at one moment.

    Each pass looks at every agent, then asks the server once about all the pool waits; a pass that finds every
    agent at rest is a moment at which nothing moves until the model acts. Between passes it waits until an agent
    moves (``ModelAgent.moved``), or, when only pool waits the server has not blocked yet remain, a moment."""
    agents = list(agents)
    if not agents:
        return
    moved = agents[0].moved
    deadline = time.monotonic() + timeout
    while True:
        moved.clear()
        moving = [a for a in agents if not a.at_rest()]
        waits = {a.pop_client_id: a for a in moving if a.popping and a.pop_client_id is not None}
        blocked = await blocked_on_server(admin, list(waits)) if waits else set()
        moving = [a for a in moving if a.pop_client_id not in blocked or not a.popping]
        if not moving:
            return
        if time.monotonic() > deadline:
            names = ", ".join(a.name for a in moving)
            raise AssertionError(f"{names}: the pull loop reached no gate within {timeout:g} s (spinning?)")
        # A pool wait on its way to the server gives no sign when it gets there: asked again after a moment.
        wait = 0.0005 if all(a.popping for a in moving) else 0.005
        try:
            async with asyncio.timeout(wait):
                await moved.wait()
        except TimeoutError:
            pass


async def blocked_on_server(admin: Redis, client_ids: list[int]) -> set[int]:
    """Which of these clients the server holds in a blocking command now (one CLIENT LIST)."""
    raw = await admin.execute_command("CLIENT", "LIST", "ID", *client_ids)  # type: ignore[no-untyped-call]
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    blocked = set()
    for line in text.splitlines():
        fields = dict(field.split("=", 1) for field in line.split() if "=" in field)
        if "b" in fields.get("flags", ""):
            blocked.add(int(fields["id"]))
    return blocked


def run(loop: asyncio.AbstractEventLoop, coro: Awaitable[Any]) -> Any:
    return loop.run_until_complete(coro)


Verdict = Callable[[], PrintResult]


def verdict(outcome: Outcome) -> PrintResult:
    if outcome is Outcome.PRINTED:
        return PrintResult(Outcome.PRINTED, "model: the label came out")
    if outcome is Outcome.FAILED:
        return PrintResult(Outcome.FAILED, "model: proof nothing came out")
    return PrintResult(Outcome.UNKNOWN, "model: no answer after the last byte")
