"""The ipp driver against a real IPP Everywhere printer (ippeveprinter), and against peers that answer badly.

Every outcome rule of docs/printers.md ("IPP printers and CUPS queues") with the printer's own job command
injecting the fault (tests/support/ipp.py); the badge's QR code is read back from the document the printer got.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from drivers.base import Badge, DeviceState, Handed, Outcome, PrintResult
from drivers.ipp import driver as ipp_driver_module
from drivers.ipp import wire
from drivers.ipp.client import IppClient, IppError, format_fingerprint, peer_fingerprint
from drivers.ipp.driver import IppDriver
from protocol.keys import Keys
from protocol.store import Store
from tests.support import ipp
from tests.support.agents import add, running_agent, state_is, write_agent_config
from tests.support.processes import badge_agent
from tests.support.waiting import wait_until

pytestmark = pytest.mark.ipp

BADGE = Badge(job_id="job-7", attendee_id="ATT-0007", name="Ada Lovelace", company="Analytical", role="Speaker")


async def opened(uri: str, **kwargs: object) -> IppDriver:
    driver = IppDriver(uri, printer_name="badge-1", io_timeout=2.0, poll_interval=0.05, **kwargs)  # type: ignore[arg-type]
    await driver.open()
    return driver


async def job(uri: str, job_id: int) -> wire.Values:
    async with IppClient(uri) as client:
        reply = await client.request(wire.GET_JOB_ATTRIBUTES, {"job-id": job_id})
        return reply.group(wire.JOB_GROUP)


async def cancelled(eve: ipp.IppEvePrinter, job_id: int) -> None:
    """The printer took the Cancel-Job (the job heads for its stop point) and, once there, the job is canceled."""
    values = await job(eve.uri, job_id)
    assert "processing-to-stop-point" in values["job-state-reasons"] or wire.first(values, "job-state") == 7, values
    eve.stop_point()

    async def canceled() -> bool:
        return wire.first(await job(eve.uri, job_id), "job-state") == 7

    await wait_until(canceled)


async def print_one(driver: IppDriver, badge: Badge = BADGE, timeout: float = 20) -> object:
    data = await asyncio.to_thread(driver.render, badge)
    return await driver.print(data, badge, timeout)


async def test_printed_badge_reads_back_from_the_printer(eve: ipp.IppEvePrinter) -> None:
    driver = await opened(eve.uri)
    try:
        status = await driver.probe()
        assert status.state is DeviceState.READY, status
        assert driver.plan is not None and driver.plan.format == "image/pwg-raster"
        assert driver.plan.dpi == 300  # the lowest of 300 and 600 it lists for raster
        result = await print_one(driver)
        assert result.outcome is Outcome.PRINTED, result  # type: ignore[attr-defined]
        assert driver.confirmed_by == "device"
        (document,) = eve.printed()
        assert document.name.endswith("-job-7")  # job-name is the job id
        image = ipp.read_document(document)
        # The page is the media the printer reports ready (US letter, 8.5 x 11 in at 300 dpi).
        assert image.size == (2550, 3300)
        assert ipp.decode_qr(image) == ["ATT-0007"]
    finally:
        await driver.aclose()


async def test_a_4x6_badge_at_600_dpi_prints_and_reads_back(tmp_path: Path, dnssd: dict[str, str]) -> None:
    """The bench's printer (4x6 in labels, black_1 PWG raster at 600 dpi only): CUPS's raster reader (ippevepcl, in
    the job command) takes the document, and the QR code reads back from it."""
    (tmp_path / "attrs.conf").write_text(ipp.LABELS_4X6_600)
    with ipp.ippeveprinter(tmp_path / "eve600", dnssd, formats="", extra=["-a", str(tmp_path / "attrs.conf")]) as eve:
        driver = await opened(eve.uri)
        try:
            assert driver.plan is not None and (driver.plan.dpi, driver.plan.raster_type) == (600, "black_1")
            result = await print_one(driver)
            assert result.outcome is Outcome.PRINTED, result  # type: ignore[attr-defined]
            (document,) = eve.printed()
            image = ipp.read_document(document)
            assert image.size == (2400, 3600)
            assert ipp.decode_qr(image) == ["ATT-0007"]
        finally:
            await driver.aclose()


async def test_the_read_that_proved_a_badge_is_the_next_ones_read_before(
    eve: ipp.IppEvePrinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Badges one after another: the printer's state read to prove one printed serves as the read before the next
    (FRESH_FOR), one Get-Printer-Attributes a badge. After a badge that did not print, or once that read is older,
    the printer is read again."""
    driver = await opened(eve.uri)
    operations: list[int] = []
    request = driver.client.request

    async def counted(operation: int, *args: Any, **kwargs: Any) -> wire.Response:
        operations.append(operation)
        return await request(operation, *args, **kwargs)

    driver.client.request = counted  # type: ignore[method-assign]
    try:
        for _ in range(3):
            assert (await print_one(driver)).outcome is Outcome.PRINTED  # type: ignore[attr-defined]
        assert operations.count(wire.GET_PRINTER_ATTRIBUTES) == 1 + 3  # before the first, after each
        eve.behave(ipp.FAILS)
        assert (await print_one(driver)).outcome is Outcome.FAILED  # type: ignore[attr-defined]
        eve.behave(ipp.PRINTS)
        operations.clear()
        assert (await print_one(driver)).outcome is Outcome.PRINTED  # type: ignore[attr-defined]
        assert operations.count(wire.GET_PRINTER_ATTRIBUTES) == 2  # read before it again, and after it
        monkeypatch.setattr(ipp_driver_module, "FRESH_FOR", 0.0)
        operations.clear()
        assert (await print_one(driver)).outcome is Outcome.PRINTED  # type: ignore[attr-defined]
        assert operations.count(wire.GET_PRINTER_ATTRIBUTES) == 2
    finally:
        await driver.aclose()


@pytest.mark.parametrize(("behaviour", "next_goes"), [(ipp.PRINTS, True), (ipp.FAILS, False), (ipp.RUNS_OUT, False)])
async def test_on_a_printer_that_takes_one_job_at_a_time_the_next_badge_goes_only_after_a_proof(
    eve: ipp.IppEvePrinter, behaviour: str, next_goes: bool
) -> None:
    """``turn``: the next badge may go once the one before it is proved printed, and never when it is not, even when
    that one ended before the next was ready to go."""
    driver = await opened(eve.uri)
    driver.one_at_a_time = True  # as a busy answer to a second job teaches it
    eve.behave(behaviour)
    try:
        handed = await driver.hand(await asyncio.to_thread(driver.render, BADGE), BADGE)
        assert isinstance(handed, Handed), handed
        result = await driver.outcome(handed, 20)
        refused = await driver.turn()
        if next_goes:
            assert result.outcome is Outcome.PRINTED and refused is None, (result, refused)
        else:
            assert result.outcome is not Outcome.PRINTED, result
            assert refused is not None and refused.outcome is Outcome.FAILED and not refused.sent, refused
            assert "did not print" in refused.reason
    finally:
        await driver.aclose()


async def test_png_for_a_printer_without_pwg_raster(tmp_path: Path, dnssd: dict[str, str]) -> None:
    with ipp.ippeveprinter(tmp_path / "png", dnssd, formats="image/png") as eve:
        driver = await opened(eve.uri)
        try:
            assert driver.plan is not None and driver.plan.format == "image/png"
            result = await print_one(driver)
            assert result.outcome is Outcome.PRINTED, result  # type: ignore[attr-defined]
            (document,) = eve.printed()
            assert document.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert ipp.decode_qr(ipp.read_document(document)) == ["ATT-0007"]
        finally:
            await driver.aclose()


async def test_aborted_before_any_impression_is_failed(eve: ipp.IppEvePrinter) -> None:
    eve.behave(ipp.FAILS)
    driver = await opened(eve.uri)
    try:
        result = await print_one(driver)
        assert result.outcome is Outcome.FAILED, result  # type: ignore[attr-defined]
        assert "aborted" in result.reason and "0 impression" in result.reason  # type: ignore[attr-defined]
        assert result.sent  # type: ignore[attr-defined]
    finally:
        await driver.aclose()


async def test_completed_without_an_impression_is_unknown(eve: ipp.IppEvePrinter) -> None:
    eve.behave(ipp.COUNTS_NOTHING)
    driver = await opened(eve.uri)
    try:
        result = await print_one(driver)
        assert result.outcome is Outcome.UNKNOWN, result  # type: ignore[attr-defined]
    finally:
        await driver.aclose()


async def test_paper_out_after_the_badge_is_unknown_and_holds_the_printer(eve: ipp.IppEvePrinter) -> None:
    eve.behave(ipp.RUNS_OUT)
    driver = await opened(eve.uri)
    try:
        result = await print_one(driver)
        assert result.outcome is Outcome.UNKNOWN, result  # type: ignore[attr-defined]
        assert "paper out" in result.reason  # type: ignore[attr-defined]
        status = await driver.probe()
        assert status.state is DeviceState.MEDIA_OUT and status.faulted, status
        # The printer takes nothing until the paper is back: nothing is sent.
        refused = await print_one(driver, Badge(job_id="job-8", attendee_id="ATT-8", name="Grace Hopper"))
        assert refused.outcome is Outcome.FAILED and not refused.sent, refused  # type: ignore[attr-defined]
        assert "paper out" in refused.reason  # type: ignore[attr-defined]
        assert len(eve.printed()) == 1
    finally:
        await driver.aclose()


async def test_job_stuck_waiting_for_media_is_cancelled_and_unknown(eve: ipp.IppEvePrinter) -> None:
    eve.behave(ipp.HANGS)
    driver = await opened(eve.uri)
    try:
        result = await print_one(driver, timeout=1.5)
        assert result.outcome is Outcome.UNKNOWN, result  # type: ignore[attr-defined]
        assert "not finished in time" in result.reason and "cancelled" in result.reason  # type: ignore[attr-defined]
        await cancelled(eve, 1)
        await driver.cancel()  # nothing left to cancel: no error
    finally:
        await driver.aclose()


async def test_cancel_before_release_cancels_what_the_printer_holds(eve: ipp.IppEvePrinter) -> None:
    """A job left with the printer (the agent gave up on it) is cancelled by ``cancel()`` before it is handed on."""
    eve.behave(ipp.HANGS)
    driver = await opened(eve.uri)
    try:
        data = await asyncio.to_thread(driver.render, BADGE)
        task = asyncio.create_task(driver.print(data, BADGE, 30))
        async with IppClient(eve.uri) as client:

            async def processing() -> bool:
                reply = await client.request(wire.GET_JOB_ATTRIBUTES, {"job-id": 1}, check=False)
                return wire.first(reply.group(wire.JOB_GROUP), "job-state") == 5

            await wait_until(processing)
            task.cancel()  # the agent's backstop gives up on the print
            with pytest.raises(asyncio.CancelledError):
                await task
            await driver.cancel()
            await cancelled(eve, 1)
    finally:
        await driver.aclose()


async def test_ipps_with_the_pinned_certificate_prints(eve: ipp.IppEvePrinter) -> None:
    uri = eve.uri.replace("ipp://", "ipps://")
    pin = format_fingerprint(await peer_fingerprint(uri))
    driver = await opened(uri, tls_fingerprint=pin)
    try:
        result = await print_one(driver)
        assert result.outcome is Outcome.PRINTED, result  # type: ignore[attr-defined]
    finally:
        await driver.aclose()


async def test_ipps_with_another_certificate_is_refused(eve: ipp.IppEvePrinter) -> None:
    uri = eve.uri.replace("ipp://", "ipps://")
    driver = IppDriver(uri, printer_name="badge-1", tls_fingerprint=hashlib.sha256(b"other").hexdigest())
    try:
        status = await driver.probe()
        assert status.state is DeviceState.OFFLINE
        (reason,) = status.reasons
        assert "badge-1" in reason and "not the pinned one" in reason and "tls_fingerprint" in reason, reason
        result = await print_one(driver)
        assert result.outcome is Outcome.FAILED and not result.sent  # type: ignore[attr-defined]
        assert eve.printed() == []
    finally:
        await driver.aclose()


# -- peers that answer badly -------------------------------------------------------------------------------------


@pytest.fixture
async def bad_peer() -> AsyncIterator[tuple[str, dict[str, bytes | int | None]]]:
    """An HTTP server at an IPP path whose answer a test sets: bytes, an HTTP status, or None (never answers)."""
    answer: dict[str, bytes | int | None] = {"body": b""}

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        body = answer["body"]
        if body is None:
            await asyncio.sleep(3600)
        if isinstance(body, int):
            return web.Response(status=body)
        assert isinstance(body, bytes)
        return web.Response(body=body, content_type="application/ipp")

    app = web.Application()
    app.router.add_post("/ipp/print", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"ipp://127.0.0.1:{port}/ipp/print", answer
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"<html>hello</html>", "not IPP"),
        (b"\x02\x00\x00\x00\x00\x00\x00\x01\x01\x47\x00\x12attributes-charset\x00\x40utf", "cut short"),
        (b"\x02\x00\x04\x06\x00\x00\x00\x01\x03", "client-error-not-found"),
        (b"\x02\x00\x00\x00\x00\x00\x00\x01" + b"\x01" + b"\x44\x00\x01x\x00\x01y" * 200_000 + b"\x03", "larger than"),
        (404, "HTTP 404"),
        (None, "no answer: timed out"),
    ],
)
async def test_bad_answers_hold_the_printer_with_a_clear_message(
    bad_peer: tuple[str, dict[str, bytes | int | None]], body: bytes | int | None, says: str
) -> None:
    uri, answer = bad_peer
    answer["body"] = body
    driver = IppDriver(uri, printer_name="badge-1", io_timeout=0.5)
    try:
        status = await driver.probe()
        assert status.state is DeviceState.OFFLINE and status.faulted
        (reason,) = status.reasons
        assert reason.startswith(f"badge-1: {uri}") and says in reason, reason
        result = await print_one(driver)
        assert result.outcome is Outcome.FAILED and not result.sent, result  # type: ignore[attr-defined]
    finally:
        await driver.aclose()


async def test_nobody_listening(tmp_path: Path) -> None:
    driver = IppDriver(f"ipp://127.0.0.1:{ipp.free_port()}/ipp/print", printer_name="badge-1")
    status = await driver.probe()
    assert status.state is DeviceState.OFFLINE and "no answer" in status.reasons[0]
    with pytest.raises(Exception, match="no answer"):
        await driver.open()
    await driver.aclose()


def test_requests_encode_collections_as_cups_reads_them() -> None:
    """What ipptool shows ippeveprinter received is checked end to end above; here the bytes of one collection."""
    body = wire.encode_request(
        wire.CREATE_JOB, {"x": 1}, {"media-col": {"media-size": {"x-dimension": 10, "y-dimension": 20}}}
    )
    reply = wire.decode_response(b"\x02\x00\x00\x00" + body[4:])
    col = reply.group(wire.JOB_GROUP)["media-col"][0]
    assert col == {"media-size": [{"x-dimension": [10], "y-dimension": [20]}]}


async def test_a_badge_drawn_for_what_the_printer_no_longer_takes_is_neither_printed_nor_handed(
    eve: ipp.IppEvePrinter,
) -> None:
    """The printer changed what it takes after the badge was drawn (a new queue behind the same URI): both ways of
    sending it refuse before a byte goes out, and say what to draw instead."""
    driver = await opened(eve.uri)
    try:
        head, _, rest = driver.render(BADGE).partition(b" ")
        stale = b"image/drawn-before " + rest
        for result in (await driver.print(stale, BADGE, 10.0), await driver.hand(stale, BADGE)):
            assert isinstance(result, PrintResult) and result.outcome is Outcome.FAILED and not result.sent
            assert result.reason.endswith(f"drawn as image/drawn-before, the printer now wants {head.decode()}")
        assert eve.printed() == []
    finally:
        await driver.aclose()


async def test_client_error_names_the_status(eve: ipp.IppEvePrinter) -> None:
    async with IppClient(eve.uri) as client:
        with pytest.raises(IppError, match="client-error-not-found"):
            await client.request(wire.GET_JOB_ATTRIBUTES, {"job-id": 4242})


# -- CUPS queues -------------------------------------------------------------------------------------------------


async def test_cups_ipp_queue_is_confirmed_by_the_device(cups: ipp.Cups, eve: ipp.IppEvePrinter) -> None:
    uri = cups.add_queue("badges", eve.uri)
    driver = await opened(uri)
    try:
        status = await driver.probe()
        assert status.ready, status
        assert driver.confirmed_by == "device" and status.detail["confirmed_by"] == "device"
        result = await print_one(driver, timeout=60)
        assert result.outcome is Outcome.PRINTED, result  # type: ignore[attr-defined]
        assert "confirmed by the device" in result.reason  # type: ignore[attr-defined]
        (document,) = eve.printed()
        assert ipp.decode_qr(ipp.read_document(document)) == ["ATT-0007"]
    finally:
        await driver.aclose()


async def test_cups_file_queue_is_confirmed_by_the_spooler(cups: ipp.Cups) -> None:
    uri = cups.add_queue("tofile", f"file://{cups.directory / 'out' / 'badges.out'}")
    driver = await opened(uri)
    try:
        status = await driver.probe()
        assert status.ready, status
        assert driver.confirmed_by == "spooler" and status.detail["confirmed_by"] == "spooler"
        result = await print_one(driver, timeout=60)
        assert result.outcome is Outcome.PRINTED, result  # type: ignore[attr-defined]
        assert "confirmed by the spooler" in result.reason  # type: ignore[attr-defined]
    finally:
        await driver.aclose()


async def test_an_agent_on_a_cups_file_queue_says_its_prints_are_the_spoolers_word(
    tmp_path: Path, cups: ipp.Cups, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    uri = cups.add_queue("tofile", f"file://{cups.directory / 'out' / 'badges.out'}")
    driver = {"language": "ipp", "uri": uri}
    config = write_agent_config(tmp_path / "desk-1.yaml", venue, redis_server.url, "desk-1", printer__driver=driver)
    said = await asyncio.to_thread(badge_agent, "check-config", "--connect", str(config))
    assert said.returncode == 0, said.stderr
    assert "prints confirmed by: spooler" in said.stdout
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    async with running_agent(tmp_path, venue, redis_server.url, printer__driver=driver):
        await wait_until(lambda: state_is(redis, k, job_id, b"printed"), 60)
        await wait_until(lambda: redis.exists(k.health("desk-1")))
        assert json.loads(await redis.get(k.health("desk-1")))["confirmed_by"] == "spooler"
    assert await redis.hget(k.job(job_id), "confirmed_by") == b"spooler"


async def test_cups_queue_that_does_not_exist(cups: ipp.Cups) -> None:
    driver = IppDriver(cups.queue_uri("nosuch"), printer_name="badge-1")
    try:
        status = await driver.probe()
        assert status.faulted
        (reason,) = status.reasons
        assert "badge-1" in reason and "/printers/nosuch" in reason and "client-error-not-found" in reason, reason
        with pytest.raises(Exception, match="client-error-not-found"):
            await driver.open()
    finally:
        await driver.aclose()
