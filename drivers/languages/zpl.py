"""Zebra ZPL: render, read ``~HS``/``~HQES``, decide the outcome, cancel with ``~JA``.

Outcome policy (docs/printers.md):
* before sending: ``~HS`` must answer with no fault and an empty buffer, else ``failed`` (nothing was sent). The
  answer that ended the previous badge (``~HS`` and the label counter, read together) stands in for it when the
  next badge follows at once (``LanguageDriver.settle``): the printer is not asked twice between two labels;
* after sending: poll ``~HS`` (with the label counter in the same write, where the printer has one). The badge
  shows up as a format in the buffer or a label remaining in the batch; once both are 0 with no fault (and the
  label counter moved past its value before the badge) it is ``printed``;
* a fault while the format still waits in the buffer (no label started): ``~JA``, then ``~HS`` must show the
  buffer empty: ``failed``. A fault while a label is being printed, silence, or a lost link: ``unknown``
  (Zebras reprint an interrupted label when the fault clears, ^JZY, so the agent cancels before handing it on).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drivers.base import DeviceState, DeviceStatus, DriverError, Outcome, PrintResult
from drivers.languages import zpl_media
from drivers.languages import zpl_status as zs
from drivers.languages.base import NO_ANSWER, LanguageDriver
from drivers.languages.pace import CompletionPace
from drivers.languages.zpl_text import load_template
from drivers.transports.base import Transport

log = logging.getLogger(__name__)


class ZplDriver(LanguageDriver):
    language = "zpl"

    def __init__(self, transport: Transport, *, template: Path | None = None, **options: Any) -> None:
        super().__init__(transport, **options)
        self.template_text = load_template(template) if template is not None else None
        self.has_label_counter = False
        #: Some printers answer the label counter asked alone but drop it when it follows ``~HS`` in the same
        #: write: every combined query would then wait out ``io_timeout``. Noticed once, they are asked apart.
        self.counter_apart = False
        self._counter_before: int | None = None  # the label counter read just before the badge in progress
        self.pace = CompletionPace(self.poll_interval)

    async def _after_open(self) -> None:
        if not self.transport.can_read:
            return
        # Link-OS printers keep a label counter (SGD); older ones stay silent and we rely on ~HS alone.
        reply = await self.transport.ask(zs.LABEL_COUNTER, _has_counter, min(self.io_timeout, 1.0))
        self.has_label_counter = _has_counter(reply)
        _, self.loaded = await zpl_media.warn_on_mismatch(
            self.transport.ask, self.label, self.io_timeout, self.description, self.has_label_counter
        )

    async def _host_status(self) -> zs.HostStatus | None:
        return _host_status_in(await self.transport.ask(zs.HOST_STATUS, zs.host_status_complete, self.io_timeout))

    async def _counter(self) -> int | None:
        return _counter_in(await self.transport.ask(zs.LABEL_COUNTER, _has_counter, self.io_timeout))

    async def _host_status_and_counter(self) -> tuple[zs.HostStatus | None, int | None]:
        """``~HS`` and the label counter in one write, one round trip (``~HS`` alone without a counter).

        ``~HS`` is answered on arrival and the counter when the command is parsed, after it: a label the status
        shows as out is already counted.
        """
        if not self.has_label_counter:
            return await self._host_status(), None
        if self.counter_apart:
            # ~HS first, then the counter: as in one write, a label the status shows as out is already counted.
            hs = await self._host_status()
            return hs, (await self._counter() if hs is not None else None)
        reply = await self.transport.ask(
            zs.HOST_STATUS + zs.LABEL_COUNTER,
            lambda b: zs.host_status_complete(b) and _has_counter(b),
            self.io_timeout,
        )
        hs, counter = _host_status_in(reply), _counter_in(reply)
        if hs is not None and counter is None:
            # The status came and the counter did not: asked alone, does it answer? Then this printer drops a
            # counter query that follows ~HS, and from now on the two are asked apart (two quick round trips
            # instead of a wait of io_timeout at every query).
            counter = await self._counter()
            if counter is not None:
                self.counter_apart = True
                log.warning(
                    "%s: answers its label counter only when asked alone; asking ~HS and the counter apart",
                    self.printer_name or self.description,
                )
        return hs, counter

    async def _read_status(self) -> DeviceStatus | None:
        hs = await self._host_status()
        if hs is None:
            return None
        reply = await self.transport.ask(zs.HOST_QUERY_ERRORS, zs.hqes_complete, self.io_timeout)
        try:
            es: zs.ErrorStatus | None = zs.parse_hqes(reply)
        except ValueError:
            es = None  # older firmware has no ~HQES; ~HS alone still names the faults that matter
        return zs.to_device_status(hs, es)

    async def _before_send(self) -> PrintResult | None:
        settled = self.settled()
        before: zs.HostStatus | None
        if isinstance(settled, _Settled):
            before, self._counter_before = settled.status, settled.counter
        else:
            before, self._counter_before = await self._host_status_and_counter()
        refusal = self.refuse(None if before is None else zs.to_device_status(before))
        if refusal is None and before is not None and (before.formats_in_buffer or before.labels_remaining):
            status = zs.to_device_status(before)
            why = "nothing sent: the printer still holds an earlier label"
            return PrintResult(Outcome.FAILED, why, status, sent=False)
        return refusal

    async def _watch(self, deadline: float) -> PrintResult:
        counter_before = self._counter_before
        started = time.monotonic()
        seen = False  # the badge showed up in the buffer or the batch: the printer really has it
        answered = True  # every query of this watch was answered in time (no late reply can still be on its way)
        status = DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,))
        while True:
            try:
                hs, counter = await self._host_status_and_counter()
            except DriverError as exc:
                return PrintResult(Outcome.UNKNOWN, f"link lost after the badge was sent: {exc}", status)
            answered = answered and hs is not None and (counter is not None or not self.has_label_counter)
            if hs is not None:
                status = zs.to_device_status(hs)
                if status.faulted:
                    return await self._faulted(hs, status)
                if hs.formats_in_buffer or hs.labels_remaining or hs.partial_format:
                    seen = True
                else:
                    result, counter = await self._drained(seen, counter_before, counter, status)
                    if result.outcome is Outcome.PRINTED:
                        self.pace.learn(time.monotonic() - started)
                        if answered and (counter is not None) == self.has_label_counter:
                            # Empty, no fault, and (where there is one) the counter after this label: what the
                            # next badge's check would ask for, and the value its proof must move past.
                            self.settle(_Settled(hs, counter))
                    return result
            if time.monotonic() >= deadline:
                why = "printer stopped answering" if hs is None else f"printer still {status.describe()}"
                return PrintResult(
                    Outcome.UNKNOWN, f"{why} {deadline - started:.0f} s after the badge was sent", status
                )
            await asyncio.sleep(min(self.pace.wait(time.monotonic() - started), max(deadline - time.monotonic(), 0)))

    async def _drained(
        self, seen: bool, counter_before: int | None, after: int | None, status: DeviceStatus
    ) -> tuple[PrintResult, int | None]:
        """The outcome once the buffer is empty with no fault, and the label counter it was judged by."""
        if counter_before is not None:
            if after is None or after <= counter_before:
                after = await self._counter()  # asked again on its own: the answer with the status got lost or lagged
            if after is not None and after > counter_before:
                why = f"buffer drained, no fault, label counter {counter_before}->{after}"
                return PrintResult(Outcome.PRINTED, why, status), after
            if after is not None:
                return PrintResult(Outcome.UNKNOWN, "buffer drained but the label counter did not move", status), after
        if seen:
            why = "printer took the badge and drained its buffer with no fault"
            return PrintResult(Outcome.PRINTED, why, status), after
        return PrintResult(Outcome.UNKNOWN, "printer never showed the badge in its buffer", status), after

    async def _faulted(self, hs: zs.HostStatus, status: DeviceStatus) -> PrintResult:
        if hs.labels_remaining == 0 and hs.formats_in_buffer > 0:
            # No label started: the whole badge is still a format in the buffer. Clearing it is the proof.
            if await self._cancel_verified():
                return PrintResult(Outcome.FAILED, f"{status.describe()}: badge cancelled before it started", status)
            return PrintResult(Outcome.UNKNOWN, f"{status.describe()}: could not verify the cancel", status)
        return PrintResult(Outcome.UNKNOWN, f"{status.describe()} while the badge was printing", status)

    async def _cancel_verified(self) -> bool:
        await self.transport.write(zs.CANCEL_ALL)
        hs = await self._host_status()
        return hs is not None and hs.formats_in_buffer == 0 and hs.labels_remaining == 0

    async def cancel(self) -> None:
        async with self.lock:
            self.unsettle()
            await self._ensure_open()
            if not self.transport.can_read:
                await self.transport.write(zs.CANCEL_ALL)  # best effort: a one-way link cannot verify it
                return
            if not await self._cancel_verified():
                raise DriverError(f"{self.description}: sent ~JA but the printer did not confirm an empty buffer")


@dataclass(frozen=True)
class _Settled:
    """What the printer answered as a badge came out: empty, no fault, and its label counter (if it has one)."""

    status: zs.HostStatus
    counter: int | None


def _has_counter(buf: bytes) -> bool:
    return _counter_in(buf) is not None


def _host_status_in(reply: bytes) -> zs.HostStatus | None:
    try:
        return zs.parse_host_status(reply)
    except ValueError:
        return None  # silence or garbage: "possibly faulted", decided by the caller


def _counter_in(reply: bytes) -> int | None:
    try:
        return zs.parse_label_counter(reply)
    except ValueError:
        return None
