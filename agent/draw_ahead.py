"""Drawing the next badge while the printer prints the current one.

Drawing takes 5-15 ms of CPU a badge (bench/render.py), more on a Pi. Done after ``begin`` it is printer idle time
between two badges; done while the previous badge prints it costs the printer nothing (bench/duty.py, "where the
gap goes"). Nothing is taken or changed in Redis to do it: the job ``take`` will most likely hand over next is
only read (``Store.peek``), and its drawing is a cache, used only when ``begin`` returns that very payload. A wrong
guess costs the drawing, never a wrong badge.

When it looks matters at a venue where printers share the pool: a look at the start of a print sees the job that
the next printer to finish will take, rarely this one's. So the look waits until shortly before this printer is
expected to finish (the median of its recent prints, less a few drawing times), when the pool's next job is most
likely the one this printer's own confirm will take.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from statistics import median
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from agent.printer import render
from core.errors import JobError
from drivers.base import Badge, RenderError
from protocol.jobs import job_from_payload

if TYPE_CHECKING:
    from agent.pull_events import PullEvents
    from drivers.base import Driver
    from protocol.store import Store

RECENT = 8  # prints and drawings the look's timing is learnt from
LEAD_DRAWINGS = 3  # look this many drawing times before the expected end of the print ...
LEAD_MARGIN = 0.02  # ... plus this (s): the peek's round trips and a loaded machine's jitter


class DrawAhead:
    def __init__(
        self,
        store: Store,
        me: str,
        driver: Driver,
        events: PullEvents,
        generation: Callable[[], int] = lambda: 0,
    ) -> None:
        """``generation``: which loading of the venue's badge layouts the agent draws with (layouts/book.py); a drawing
        made under another is not used."""
        self.store = store
        self.generation = generation
        self._drawn_under = 0
        self.me = me
        self.driver = driver
        self.events = events
        # Both written here only: by ``printed`` (first byte -> the printer's evidence) and by ``draw``.
        self.print_seconds: deque[float] = deque(maxlen=RECENT)
        self.draw_seconds: deque[float] = deque(maxlen=RECENT)
        self._task: asyncio.Task[bytes | None] | None = None
        self._payload: bytes | None = None  # the payload the task looked at and draws, once it has looked
        self._kept: tuple[bytes, int, bytes] | None = None  # see ``keep``: payload, generation, drawing

    def start(self) -> None:
        """A badge's first byte is about to go out: look for the next job near its end, and draw it."""
        if self.driver.render_is_cheap or (self._task is not None and not self._task.done()):
            return
        delay = 0.0
        if self.print_seconds and self.draw_seconds:
            lead = LEAD_DRAWINGS * median(self.draw_seconds) + LEAD_MARGIN
            delay = max(0.0, median(self.print_seconds) - lead)
        self._payload = None
        self._drawn_under = self.generation()
        self._task = asyncio.create_task(self._draw(delay), name="draw-ahead")

    async def _draw(self, delay: float) -> bytes | None:
        try:
            if delay:
                await asyncio.sleep(delay)
            nxt = await self.store.peek(self.me)
            if nxt is None:
                return None
            _, payload = nxt
            self._payload = payload
            return await self.draw(job_from_payload(payload).badge())
        except (RedisError, OSError, JobError, RenderError):
            return None  # a guess: the real begin and drawing meet whatever this met, and report it

    def printed(self, seconds: float) -> None:
        """A badge took ``seconds`` from its first byte to the printer's evidence: when to look next time."""
        self.print_seconds.append(seconds)

    async def draw(self, badge: Badge) -> bytes:
        """Draw a badge (in a worker thread), learning how long drawing takes here."""
        started = time.monotonic()
        data = await render(self.driver, badge)
        self.draw_seconds.append(time.monotonic() - started)
        return data

    async def take(self, payload: bytes) -> bytes | None:
        """The bytes drawn ahead for exactly this payload, or None (draw it now).

        A drawing still under way for this very payload is waited for: finishing it is quicker than starting over.
        """
        kept, self._kept = self._kept, None
        if kept is not None and kept[:2] == (payload, self.generation()):
            self.events.drawn_ahead(used=True)
            return kept[2]
        task, self._task = self._task, None
        if task is None:
            return None
        looked_at, self._payload = self._payload, None
        if looked_at != payload or self._drawn_under != self.generation():  # another job, or an older layout
            task.cancel()  # still waiting to look, or drawing another job (a no-op once it is done)
            if looked_at is not None:
                self.events.drawn_ahead(used=False)
            return None
        data = None if task.cancelled() else await task
        if data is not None:
            self.events.drawn_ahead(used=True)
        return data

    def keep(self, payload: bytes, data: bytes) -> None:
        """A badge drawn and refused by the printer with nothing of it sent (a printer that takes one job at a time,
        asked for a second): its drawing serves the begin that takes the same payload again, next."""
        self._kept = (payload, self.generation(), data)

    def has_drawing(self) -> bool:
        """True when a drawing is finished and waits for its job's begin."""
        task = self._task
        return task is not None and task.done() and not task.cancelled() and task.result() is not None

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
