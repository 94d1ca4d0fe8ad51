"""IPP Everywhere / AirPrint printers and CUPS queues (``driver.language: ipp``).

Outcome policy (docs/printers.md, "IPP printers and CUPS queues"):

- Before a badge: Get-Printer-Attributes. Stopped, not accepting jobs, or a fault reason (``media-empty``,
  ``media-jam``, ``cover-open``, ``offline``, ``paused``, any ``-error``): ``failed``, nothing sent.
- Create-Job (``job-name`` = the job id) + Send-Document, then Get-Job-Attributes until ``job-state`` is final.
- ``completed`` with ``job-completed-successfully`` (and ``job-impressions-completed`` >= 1 where the printer counts
  them) and no new fault reason in a Get-Printer-Attributes read afterwards: ``printed``.
- ``aborted`` or ``canceled`` with no impression counted: ``failed``.
- Anything else: a refused or cut-off document after Create-Job, the printer silent mid-job, a job not final by the
  print timeout (cancelled with Cancel-Job), ``completed`` without the proof above: ``unknown``.

``confirmed_by`` says whose word that is: ``device`` for a printer, or a CUPS queue whose backend is IPP (it waits
for the printer's job); ``spooler`` for a CUPS queue whose backend cannot read the device (``device-uri`` usb://,
socket://, file:...).

The badge waiting at the printer (``holds`` 2; docs/printers.md): the agent may hand the printer its next badge
(``hand``: Create-Job + Send-Document) while one prints, so the printer starts it the moment the first ends. The
printer keeps it ``pending`` behind the printing one. While one waits, each poll of the printing job also reads the
printer's state: a fault withdraws the waiting one at once (Cancel-Job while it is still pending), and a badge the
printer never started is ``failed`` with nothing counted against it. Requests then take the driver's lock one at a
time, so a probe, the hand-over and the watch of the printing job take turns on the one connection.

A printer that takes one job at a time (it answers a second Create-Job ``server-error-busy`` while one prints, as
ippeveprinter does) keeps the next badge in the agent instead, drawn and ready (``turn``): the watch of the printing
badge polls it closely as its expected end nears (the median of the last badges' print times), and the next badge is
handed over the moment that one is proved printed, on the printer's state read for that proof (``FRESH_FOR``). When
it is not proved printed, the next badge is never sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from statistics import median
from typing import Any

from drivers.base import (
    Badge,
    DeviceState,
    DeviceStatus,
    Driver,
    DriverError,
    Handed,
    Outcome,
    PrintResult,
    RenderError,
)
from drivers.ipp import status as ipp_status
from drivers.ipp import wire
from drivers.ipp.client import IppClient, IppError
from drivers.label import LabelConfig

PENDING, HELD, PROCESSING, STOPPED, CANCELED, ABORTED, COMPLETED = 3, 4, 5, 6, 7, 8, 9
FINAL = {CANCELED: "canceled", ABORTED: "aborted", COMPLETED: "completed"}
JOB_ATTRIBUTES = ["job-state", "job-state-reasons", "job-impressions-completed", "job-state-message"]
#: How long the printer's state, read as a badge was proved printed, stands in for the read before the next badge
#: (s). The proof itself needs that read (no new fault after the job); a second one a few milliseconds later would
#: only repeat it. Anything less than a proof (a fault, a failed or unknown badge, a probe, a cancel) drops it, and a
#: badge after a longer pause reads the printer again.
FRESH_FOR = 1.0
#: With the next badge ready for a printer that takes one job at a time: the printing job is polled this often (s)
#: from TURN_LEAD before its expected end, for at most TURN_POLLS polls a badge (then at the poll interval again).
TURN_POLL = 0.003
TURN_LEAD = 0.03
TURN_POLLS = 50
RECENT = 8  # print times the expected end is learnt from
WARM_UP = Badge(job_id="warm-up", attendee_id="WARM-UP", name="Warm Up Badge", company="Company", role="Role")


class IppDriver(Driver):
    language = "ipp"
    holds = 2

    def __init__(
        self,
        uri: str,
        *,
        printer_name: str = "",
        label: LabelConfig | None = None,
        tls_fingerprint: str | None = None,
        connect_timeout: float = 3.0,
        io_timeout: float = 10.0,
        poll_interval: float = 0.2,
    ) -> None:
        try:
            self.client = IppClient(
                uri, tls_fingerprint=tls_fingerprint, connect_timeout=connect_timeout, io_timeout=io_timeout
            )
        except ValueError as exc:
            raise DriverError(str(exc)) from None
        self.uri = uri
        self.printer_name = printer_name
        self.label = label or LabelConfig()
        self.poll_interval = poll_interval
        self.lock = asyncio.Lock()
        self.description = f"IPP printer {uri}"
        #: ``device`` or ``spooler`` (module docstring); learned from the queue's ``device-uri`` at every read.
        self.confirmed_by = "device"
        self.plan: ipp_status.Plan | None = None
        self.cups = False
        #: Jobs this driver created that the printer may still hold (cancelled before a job leaves the agent).
        self._jobs: set[int] = set()
        #: Handed jobs (``hand``) whose outcome nobody has asked for yet, oldest first: the ones waiting at the printer.
        self._handed: list[int] = []
        #: The last Create-Job was refused as busy (the printer takes one job at a time).
        self._busy = False
        #: Handed jobs withdrawn while they waited (a fault while another printed), with their outcome.
        self._withdrawn: dict[int, PrintResult] = {}
        #: The printer answered busy to a second job while one of ours printed: the next badge waits in the agent.
        self.one_at_a_time = False
        #: The printer's state read as the last badge was proved printed, and when (``FRESH_FOR``); taken once.
        self._fresh: tuple[float, DeviceStatus] | None = None
        #: Each handed job's outcome once known (``turn`` waits on it), and when its document went out.
        self._settled: dict[int, asyncio.Future[PrintResult]] = {}
        self._sent_at: dict[int, float] = {}
        #: The last handed job's outcome (``turn``: the badge before the next one), kept once it is known.
        self._previous: asyncio.Future[PrintResult] | None = None
        #: Seconds from a handed badge's document to its proof, for the last badges that printed.
        self.print_seconds: deque[float] = deque(maxlen=RECENT)
        #: A badge is ready behind the printing one (``turn``): the watch polls closely near its end.
        self._next_ready = False
        self._wake = asyncio.Event()
        self._warm_for: ipp_status.Plan | None = None  # the plan the fonts were loaded for (``open``)

    # -- the printer's attributes -----------------------------------------------------------------------------

    async def _attributes(self) -> wire.Values:
        reply = await self.client.request(
            wire.GET_PRINTER_ATTRIBUTES, {"requested-attributes": ipp_status.PRINTER_ATTRIBUTES}
        )
        values = reply.group(wire.PRINTER_GROUP)
        if "printer-state" not in values:
            raise IppError(f"{self.uri}: the answer has no printer-state (is this a printer's or a queue's URI?)")
        self.confirmed_by = ipp_status.confirmed_by(values)
        #: A CUPS queue (it names the device behind it): its job reasons read as CUPS writes them.
        self.cups = "device-uri" in values
        model = wire.first(values, "printer-make-and-model")
        self.description = f"IPP printer {self.uri}" + (f" ({model})" if isinstance(model, str) and model else "")
        return values

    def _judge(self, values: wire.Values) -> DeviceStatus:
        """The status, with a printer that takes none of our formats as a fault (it would refuse every badge)."""
        status = ipp_status.to_device_status(values)
        status.detail["confirmed_by"] = self.confirmed_by
        plan = ipp_status.plan(values, self.label)
        if isinstance(plan, str):
            return DeviceStatus(DeviceState.ERROR, (plan,), status.detail) if not status.faulted else status
        self.plan = plan
        self.loaded = plan.label
        reason = self.media_fault() if self.media_fault is not None else None
        if reason is not None and not status.faulted:
            return DeviceStatus(DeviceState.MEDIA_OUT, (reason,), status.detail)
        return status

    async def _read_status(self) -> DeviceStatus:
        self._fresh = None  # a newer read supersedes it, and one that shows a fault must win
        try:
            return self._judge(await self._attributes())
        except IppError as exc:
            return DeviceStatus(DeviceState.OFFLINE, (f"{self.printer_name or 'printer'}: {exc}",))

    # -- Driver ---------------------------------------------------------------------------------------------------

    async def open(self) -> None:
        async with self.lock:
            await self.client.open()
            try:
                self._judge(await self._attributes())
            except IppError as exc:
                raise DriverError(str(exc)) from None
        # One throwaway badge drawn at the printer's resolution and page (known only now) loads the fonts at its
        # sizes, so the first real badge does not pay for it.
        if self.plan is not None and self._warm_for != self.plan:
            self._warm_for = self.plan
            with contextlib.suppress(RenderError):  # the real badge reports the same problem where it can be acted on
                await asyncio.to_thread(self.render, WARM_UP)

    async def aclose(self) -> None:
        async with self.lock:
            self._fresh = None
            await self.client.aclose()

    async def probe(self) -> DeviceStatus:
        async with self.lock:
            return await self._read_status()

    def render(self, badge: Badge) -> bytes:
        from drivers.ipp import raster

        plan = self.plan or ipp_status.Plan(
            ipp_status.PNG, self.label.dpi, round(self.label.width_mm * 100), round(self.label.height_mm * 100)
        )
        label = plan.label
        try:
            if self.draw is not None:
                image = self.draw(badge, label)
            else:
                from drivers.render import render_badge

                image = render_badge(badge, label)
            return raster.encode(image, plan)
        except ValueError as exc:
            raise RenderError(f"cannot encode the badge for {plan.format}: {exc}") from exc

    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        fmt, size, document = _split(data)
        async with self.lock:
            before, refused = await self._ready(fmt)
            if refused is not None:
                return refused
            return await self._print(fmt, size, document, badge, before, time.monotonic() + timeout)

    async def _ready(self, fmt: str) -> tuple[DeviceStatus, PrintResult | None]:
        """The printer's state before a badge drawn as ``fmt`` (``_before``), and why nothing of the badge goes to
        it (None: it may). Called under the lock."""
        before = await self._before()
        if before.faulted:
            return before, PrintResult(Outcome.FAILED, f"nothing sent: printer {before.describe()}", before, sent=False)
        if self.plan is not None and fmt != self.plan.format:
            # Drawn before the printer changed what it takes (a new queue behind the same URI): draw again.
            why = f"nothing sent: the badge was drawn as {fmt}, the printer now wants {self.plan.format}"
            return before, PrintResult(Outcome.FAILED, why, before, sent=False)
        return before, None

    async def _before(self) -> DeviceStatus:
        """The printer's state before a badge: the read that proved the last badge printed when it is fresh
        (``FRESH_FOR``), else a new one."""
        fresh, self._fresh = self._fresh, None
        if fresh is not None and time.monotonic() - fresh[0] < FRESH_FOR and not fresh[1].faulted:
            return fresh[1]
        return await self._read_status()

    async def _print(
        self, fmt: str, size: str, document: bytes, badge: Badge, before: DeviceStatus, deadline: float
    ) -> PrintResult:
        sent = await self._send(fmt, size, document, badge, before, deadline)
        if isinstance(sent, PrintResult):
            return sent
        return await self._watch(sent, before, deadline)

    async def _send(
        self, fmt: str, size: str, document: bytes, badge: Badge, before: DeviceStatus, deadline: float
    ) -> int | PrintResult:
        """Create-Job + Send-Document: the printer's job id, or the outcome when the printer holds none of it."""
        job_attributes: dict[str, Any] = {}
        width, _, height = size.partition("x")
        if width.isdigit() and height.isdigit():
            # The page the badge was drawn for; a printer that has other media ready picks its nearest (fidelity off).
            job_attributes["media-col"] = {"media-size": {"x-dimension": int(width), "y-dimension": int(height)}}
        try:
            created = await self.client.request(
                wire.CREATE_JOB,
                {"job-name": wire.Value(wire.NAME, badge.job_id), "ipp-attribute-fidelity": False},
                job_attributes,
            )
        except IppError as exc:
            self._busy = exc.status == wire.BUSY
            status = before if exc.status is not None else DeviceStatus(DeviceState.OFFLINE, (str(exc),))
            return PrintResult(Outcome.FAILED, f"nothing sent: the printer refused the job: {exc}", status, sent=False)
        job_id = wire.first(created.group(wire.JOB_GROUP), "job-id")
        if not isinstance(job_id, int):
            return PrintResult(Outcome.FAILED, "nothing sent: Create-Job answered without a job-id", before, sent=False)
        self._jobs.add(job_id)
        try:
            await self.client.request(
                wire.SEND_DOCUMENT,
                {
                    "job-id": job_id,
                    "document-format": wire.Value(wire.MIME_TYPE, fmt),
                    "document-name": wire.Value(wire.NAME, badge.job_id),
                    "last-document": True,
                },
                data=document,
                timeout=max(1.0, deadline - time.monotonic()),
            )
        except IppError as exc:
            return await self._unsent(job_id, exc, before)
        return job_id

    async def _unsent(self, job_id: int, exc: IppError, before: DeviceStatus) -> PrintResult:
        """Send-Document failed. Refused outright (an IPP status): the job has no document and is cancelled:
        ``failed``. Cut off: part of it may have reached the printer: cancelled if it can be, ``unknown``."""
        cancelled = await self._cancel_job(job_id)
        if exc.status is not None and cancelled:
            return PrintResult(Outcome.FAILED, f"the printer refused the badge: {exc}; job cancelled", before)
        return PrintResult(Outcome.UNKNOWN, f"sending the badge failed: {exc}", before)

    async def _watch(
        self, job_id: int, before: DeviceStatus, deadline: float, lock: asyncio.Lock | None = None
    ) -> PrintResult:
        """Poll the job until it is final or ``deadline``. ``lock``: taken for each poll (the badge waiting at the
        printer: the hand-over and probes take turns with the watch); None: the caller holds the driver's lock."""
        values: wire.Values = {}
        step = lock or contextlib.nullcontext()
        fast = 0  # polls at TURN_POLL so far
        while True:
            async with step:
                try:
                    reply = await self.client.request(
                        wire.GET_JOB_ATTRIBUTES, {"job-id": job_id, "requested-attributes": JOB_ATTRIBUTES}
                    )
                except IppError as exc:
                    return PrintResult(Outcome.UNKNOWN, f"the printer stopped answering while printing: {exc}", before)
                values = reply.group(wire.JOB_GROUP)
                state = wire.first(values, "job-state")
                if state in FINAL:
                    self._jobs.discard(job_id)
                    return await self._judge_job(job_id, state, values, before)
                await self._withdraw_waiting_on_fault(job_id)
            if time.monotonic() >= deadline:
                break
            fast = await self._pause(job_id, deadline, fast)
        async with step:
            reasons = ", ".join(r for r in values.get("job-state-reasons", []) if isinstance(r, str)) or "none"
            cancelled = await self._cancel_job(job_id)
            after = await self._read_status()
        why = f"job {job_id} not finished in time (job-state {wire.first(values, 'job-state')}, reasons {reasons})"
        return PrintResult(Outcome.UNKNOWN, why + ("; cancelled" if cancelled else "; cancel failed"), after)

    async def _pause(self, job_id: int, deadline: float, fast: int) -> int:
        """Wait until the next poll of a printing job; the polls made at ``TURN_POLL`` so far come back.

        The poll interval, except on a printer that takes one job at a time: there the wait ends ``TURN_LEAD`` before
        the job's expected end, and from then on, while the next badge is ready (``turn``), the job is polled every
        ``TURN_POLL`` (at most ``TURN_POLLS`` times), so the next badge goes out within milliseconds of its end.
        """
        now = time.monotonic()
        delay = self.poll_interval
        sent = self._sent_at.get(job_id)
        if self.one_at_a_time and sent is not None and self.print_seconds:
            until = sent + median(self.print_seconds) - TURN_LEAD - now
            if until > 0:
                delay = min(delay, until)
            elif self._next_ready and fast < TURN_POLLS:
                delay, fast = TURN_POLL, fast + 1
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(min(delay, max(0.0, deadline - now))):
                await self._wake.wait()  # the next badge became ready: time the polls again
        return fast

    async def _withdraw_waiting_on_fault(self, printing: int) -> None:
        """While a handed badge waits behind the printing one: a fault the printer reports withdraws it now, before
        the printer could start it (paper out on the printing badge must not run the next one into the same fault)."""
        waiting = [job for job in self._handed if job != printing and job not in self._withdrawn]
        if not waiting:
            return
        status = await self._read_status()
        if not status.faulted:
            return
        for job in waiting:
            self._withdrawn[job] = await self._withdraw(job, f"the printer reported {status.describe()}")

    async def _withdraw(self, job_id: int, why: str) -> PrintResult:
        """Cancel a handed job before it leaves the agent; its outcome (see ``withdraw``). Under the driver's lock."""
        try:
            values = (
                await self.client.request(
                    wire.GET_JOB_ATTRIBUTES, {"job-id": job_id, "requested-attributes": JOB_ATTRIBUTES}
                )
            ).group(wire.JOB_GROUP)
        except IppError as exc:
            cancelled = await self._cancel_job(job_id)
            said = "cancelled" if cancelled else "cancel failed"
            return PrintResult(Outcome.UNKNOWN, f"{why}; the waiting badge's job {job_id} unread ({exc}); {said}")
        state = wire.first(values, "job-state")
        if state in FINAL:
            self._jobs.discard(job_id)
            return await self._judge_job(job_id, state, values, DeviceStatus(DeviceState.UNKNOWN))
        if state in (PENDING, HELD) and await self._cancel_job(job_id):
            # Still pending when cancelled: only a job that is canceled now, with no impression counted, was never
            # started (one the printer began stays processing until its stop point).
            with contextlib.suppress(IppError):
                after = (
                    await self.client.request(
                        wire.GET_JOB_ATTRIBUTES, {"job-id": job_id, "requested-attributes": JOB_ATTRIBUTES}
                    )
                ).group(wire.JOB_GROUP)
                impressions = wire.first(after, "job-impressions-completed")
                if wire.first(after, "job-state") == CANCELED and not (isinstance(impressions, int) and impressions):
                    why += f"; job {job_id} was still waiting and is cancelled at the printer, never started"
                    return PrintResult(Outcome.FAILED, why, sent=False)
        cancelled = await self._cancel_job(job_id)
        said = "cancelled" if cancelled else "cancel failed"
        return PrintResult(Outcome.UNKNOWN, f"{why}; job {job_id} was at the printer (job-state {state}); {said}")

    async def _judge_job(self, job_id: int, state: int, values: wire.Values, before: DeviceStatus) -> PrintResult:
        reasons = [r for r in values.get("job-state-reasons", []) if isinstance(r, str)]
        impressions = wire.first(values, "job-impressions-completed")
        # A spooler counts no impression a raw queue's backend sends (usb, socket, file): its 0 proves nothing.
        counted = isinstance(impressions, int) and self.confirmed_by == "device"
        said = f"job {job_id} {FINAL[state]} ({', '.join(reasons) or 'no reasons'}"
        said += f", {impressions} impression(s))" if counted else ", impressions not counted)"
        if state != COMPLETED:
            if counted and impressions == 0:
                return PrintResult(Outcome.FAILED, f"not printed: {said}", before)
            return PrintResult(Outcome.UNKNOWN, f"maybe printed: {said}", before)
        # CUPS leaves a finished job's reasons at processing-to-stop-point; its "completed" is the backend's exit 0
        # (the ipp backend's after the printer's own job completed).
        cups_done = self.cups and set(reasons) <= {"processing-to-stop-point", "none"}
        if not ("job-completed-successfully" in reasons or cups_done) or (counted and impressions < 1):
            return PrintResult(Outcome.UNKNOWN, f"maybe printed: {said}", before)
        after = await self._read_status()
        # A fault that appeared while the badge printed (the last sheet jammed, the roll ran out on it) may have
        # spoilt it even though the job is complete.
        new = [r for r in after.reasons if r not in before.reasons] if after.faulted else []
        if after.state is DeviceState.OFFLINE:
            return PrintResult(Outcome.UNKNOWN, f"{said}, then the printer did not answer: {after.describe()}", after)
        if new:
            return PrintResult(Outcome.UNKNOWN, f"{said}, but the printer then reported {', '.join(new)}", after)
        if not after.faulted:
            self._fresh = (time.monotonic(), after)
        return PrintResult(Outcome.PRINTED, f"{said} (confirmed by the {self.confirmed_by})", after)

    async def _cancel_job(self, job_id: int) -> bool:
        """Cancel-Job; True when the printer no longer holds the job (cancelled now, or already final)."""
        try:
            reply = await self.client.request(wire.CANCEL_JOB, {"job-id": job_id}, check=False)
        except IppError:
            return False
        if reply.ok:
            self._jobs.discard(job_id)
            return True
        with contextlib.suppress(IppError):
            state = wire.first(
                (
                    await self.client.request(
                        wire.GET_JOB_ATTRIBUTES, {"job-id": job_id, "requested-attributes": ["job-state"]}
                    )
                ).group(wire.JOB_GROUP),
                "job-state",
            )
            if state in FINAL:
                self._jobs.discard(job_id)
                return True
        if reply.status == wire.NOT_FOUND:
            self._jobs.discard(job_id)  # the printer forgot it: it holds nothing of it
            return True
        return False

    # -- the badge waiting at the printer (module docstring) ------------------------------------------------------

    async def hand(self, data: bytes, badge: Badge) -> Handed | PrintResult:
        fmt, size, document = _split(data)
        async with self.lock:
            before, refused = await self._ready(fmt)
            if refused is not None:
                return refused
            self._busy = False
            sent = await self._send(fmt, size, document, badge, before, time.monotonic() + self.client.io_timeout)
            if isinstance(sent, PrintResult):
                if self._busy and self._handed:
                    # A printer that takes one job at a time (ippeveprinter among them) refuses a second while one
                    # prints: from now on the next badge waits in the agent for its turn (``turn``). This one was not
                    # sent and goes back unflagged.
                    self.one_at_a_time = True
                return sent
            self._handed.append(sent)
            self._settled[sent] = self._previous = asyncio.get_running_loop().create_future()
            self._sent_at[sent] = time.monotonic()
            return Handed(sent, before)

    async def turn(self) -> PrintResult | None:
        """Wait until the next badge may be handed over: at once, except on a printer that takes one job at a time
        while one of ours prints, where it waits for that badge's outcome (its watch, ``outcome``). None: hand it
        over now (the printer is free, and its state was read as the last badge was proved); else why not (the
        badge before it did not print: nothing of this one is sent)."""
        previous = self._previous
        if not self.one_at_a_time or previous is None:
            return None
        # Waited for even when already known: a badge before it that was not proved printed may have ended while
        # this one was drawn.
        self._next_ready = True
        self._wake.set()
        try:
            before = await asyncio.shield(previous)
        finally:
            self._next_ready = False
        if before.outcome is Outcome.PRINTED:
            return None
        why = f"nothing sent: the badge before it did not print ({before.reason})"
        return PrintResult(Outcome.FAILED, why, before.status, sent=False)

    async def outcome(self, handed: Handed, timeout: float) -> PrintResult:
        job_id = int(handed.job)
        result: PrintResult | None = None
        try:
            if job_id in self._withdrawn:
                result = self._withdrawn.pop(job_id)
                return result
            result = await self._watch(job_id, handed.before, time.monotonic() + timeout, self.lock)
            sent = self._sent_at.get(job_id)
            if result.outcome is Outcome.PRINTED and sent is not None:
                self.print_seconds.append(time.monotonic() - sent)
            return result
        finally:
            self._forget(job_id, result)

    async def withdraw(self, handed: Handed) -> PrintResult:
        job_id = int(handed.job)
        try:
            if job_id in self._withdrawn:
                return self._withdrawn.pop(job_id)
            async with self.lock:
                return await self._withdraw(job_id, "withdrawn: the badge before it did not print")
        finally:
            self._forget(job_id)

    def _forget(self, job_id: int, result: PrintResult | None = None) -> None:
        if job_id in self._handed:
            self._handed.remove(job_id)
        self._withdrawn.pop(job_id, None)
        self._sent_at.pop(job_id, None)
        settled = self._settled.pop(job_id, None)
        if settled is not None and not settled.done():
            # No outcome (the watch was cancelled, the badge withdrawn): whatever waits behind it must not go out.
            settled.set_result(result or PrintResult(Outcome.UNKNOWN, f"job {job_id}: no outcome"))

    async def cancel(self) -> None:
        async with self.lock:
            self._fresh = None
            left = [job for job in sorted(self._jobs) if not await self._cancel_job(job)]
            # Handed jobs cancelled here are settled by the caller (recovery): none waits at the printer any more.
            self._handed = [job for job in self._handed if job in left]
            if left:
                raise DriverError(f"{self.description}: could not cancel job(s) {', '.join(map(str, left))}")


def _split(data: bytes) -> tuple[str, str, bytes]:
    """A drawn badge (``render``): the document's format and size from its head line, and the document."""
    head, _, document = data.partition(b"\n")
    fmt, size, *_ = [*head.decode("ascii", "replace").split(" "), "", ""]
    return fmt, size, document
