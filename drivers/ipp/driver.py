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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
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

    async def aclose(self) -> None:
        async with self.lock:
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
        head, _, document = data.partition(b"\n")
        fmt, size, *_ = [*head.decode("ascii", "replace").split(" "), "", ""]
        async with self.lock:
            before = await self._read_status()
            if before.faulted:
                return PrintResult(Outcome.FAILED, f"nothing sent: printer {before.describe()}", before, sent=False)
            if self.plan is not None and fmt != self.plan.format:
                # Drawn before the printer changed what it takes (a new queue behind the same URI): draw again.
                why = f"nothing sent: the badge was drawn as {fmt}, the printer now wants {self.plan.format}"
                return PrintResult(Outcome.FAILED, why, before, sent=False)
            return await self._print(fmt, size, document, badge, before, time.monotonic() + timeout)

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
            await asyncio.sleep(min(self.poll_interval, max(0.0, deadline - time.monotonic())))
        async with step:
            reasons = ", ".join(r for r in values.get("job-state-reasons", []) if isinstance(r, str)) or "none"
            cancelled = await self._cancel_job(job_id)
            after = await self._read_status()
        why = f"job {job_id} not finished in time (job-state {wire.first(values, 'job-state')}, reasons {reasons})"
        return PrintResult(Outcome.UNKNOWN, why + ("; cancelled" if cancelled else "; cancel failed"), after)

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
        head, _, document = data.partition(b"\n")
        fmt, size, *_ = [*head.decode("ascii", "replace").split(" "), "", ""]
        async with self.lock:
            before = await self._read_status()
            if before.faulted:
                return PrintResult(Outcome.FAILED, f"nothing sent: printer {before.describe()}", before, sent=False)
            if self.plan is not None and fmt != self.plan.format:
                why = f"nothing sent: the badge was drawn as {fmt}, the printer now wants {self.plan.format}"
                return PrintResult(Outcome.FAILED, why, before, sent=False)
            self._busy = False
            sent = await self._send(fmt, size, document, badge, before, time.monotonic() + self.client.io_timeout)
            if isinstance(sent, PrintResult):
                if self._busy and self._handed:
                    # A printer that takes one job at a time (ippeveprinter among them) refuses a second while one
                    # prints: from now on it gets one badge at a time. This one was not sent and goes back unflagged.
                    self.holds = 1
                return sent
            self._handed.append(sent)
            return Handed(sent, before)

    async def outcome(self, handed: Handed, timeout: float) -> PrintResult:
        job_id = int(handed.job)
        try:
            if job_id in self._withdrawn:
                return self._withdrawn.pop(job_id)
            return await self._watch(job_id, handed.before, time.monotonic() + timeout, self.lock)
        finally:
            self._forget(job_id)

    async def withdraw(self, handed: Handed) -> PrintResult:
        job_id = int(handed.job)
        try:
            if job_id in self._withdrawn:
                return self._withdrawn.pop(job_id)
            async with self.lock:
                return await self._withdraw(job_id, "withdrawn: the badge before it did not print")
        finally:
            self._forget(job_id)

    def _forget(self, job_id: int) -> None:
        if job_id in self._handed:
            self._handed.remove(job_id)
        self._withdrawn.pop(job_id, None)

    async def cancel(self) -> None:
        async with self.lock:
            left = [job for job in sorted(self._jobs) if not await self._cancel_job(job)]
            # Handed jobs cancelled here are settled by the caller (recovery): none waits at the printer any more.
            self._handed = [job for job in self._handed if job in left]
            if left:
                raise DriverError(f"{self.description}: could not cancel job(s) {', '.join(map(str, left))}")
