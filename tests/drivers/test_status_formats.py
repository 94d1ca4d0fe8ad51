"""Every flag and bit of the published status formats, parsed; fuzzed replies never crash the parsers."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
from brother_ql.reader import RESP_ERROR_INFORMATION_1_DEF, RESP_ERROR_INFORMATION_2_DEF, interpret_response
from escpos.printer import Network
from hypothesis import given
from hypothesis import strategies as st

from drivers.base import DeviceState, DeviceStatus
from drivers.emulators import EscposPrinter
from drivers.emulators.fronts import TcpFront
from drivers.languages import brother_status as bs
from drivers.languages import escpos_status as es
from drivers.languages import zpl_status as zs

IDLE = zs.HostStatus(0, False, False, 1218, 0, False, False, False, False, False, False, 0, False, False, False, "2",
                     0, False, 0, True, 0, 1234, False)  # fmt: skip

ZPL_FLAGS = {
    "paper_out": DeviceState.MEDIA_OUT,
    "paused": DeviceState.PAUSED,
    "head_up": DeviceState.HEAD_OPEN,
    "ribbon_out": DeviceState.RIBBON_OUT,
    "over_temperature": DeviceState.OVERHEAT,
    "under_temperature": DeviceState.ERROR,
    "corrupt_ram": DeviceState.ERROR,
    "comm_diag_mode": DeviceState.ERROR,
}


@pytest.mark.parametrize("flag", [f.name for f in dataclasses.fields(zs.HostStatus) if f.type in ("bool", bool)])
def test_every_host_status_flag_round_trips(flag: str) -> None:
    hs = dataclasses.replace(IDLE, **{flag: not getattr(IDLE, flag)})
    assert zs.parse_host_status(zs.format_host_status(hs)) == hs
    state = zs.to_device_status(hs).state
    if flag in ZPL_FLAGS:
        assert state is ZPL_FLAGS[flag]
    elif flag == "partial_format":
        assert state is DeviceState.PRINTING
    else:
        assert state is DeviceState.READY


def test_host_status_counts_and_busy() -> None:
    hs = dataclasses.replace(IDLE, formats_in_buffer=3, labels_remaining=12, graphics_stored=4)
    assert zs.parse_host_status(zs.format_host_status(hs)) == hs
    assert zs.to_device_status(hs).state is DeviceState.PRINTING


def test_published_host_status_example() -> None:
    reply = (
        b"\x02030,0,0,1245,000,0,0,0,000,0,0,0\x03\r\n\x02001,0,0,0,1,2,4,0,00000000,1,000\x03\r\n\x021234,0\x03\r\n"
    )
    hs = zs.parse_host_status(reply)
    assert (hs.interface, hs.label_length, hs.print_mode, hs.password) == (30, 1245, "2", 1234)
    assert zs.to_device_status(hs).ready


@pytest.mark.parametrize("bit", list(zs.HQES_ERRORS))
def test_every_hqes_error_bit(bit: int) -> None:
    es_ = zs.parse_hqes(zs.format_hqes(bit, 0))
    status = zs.to_device_status(IDLE, es_)
    assert status.state is zs.HQES_ERRORS[bit][0]
    assert zs.HQES_ERRORS[bit][1] in status.reasons


@pytest.mark.parametrize("bit", list(zs.HQES_WARNINGS))
def test_every_hqes_warning_bit(bit: int) -> None:
    status = zs.to_device_status(IDLE, zs.parse_hqes(zs.format_hqes(0, bit)))
    assert status.ready and status.detail["warnings"] == [zs.HQES_WARNINGS[bit]]


@given(st.binary(max_size=200))
def test_zpl_parsers_never_crash(data: bytes) -> None:
    for parse in (zs.parse_host_status, zs.parse_hqes, zs.parse_label_counter):
        with contextlib.suppress(ValueError):
            parse(data)


@given(st.lists(st.text(alphabet="0123456789,x \x02\x03", max_size=40), min_size=3, max_size=3))
def test_zpl_framed_garbage_is_rejected_or_parsed(strings: list[str]) -> None:
    data = b"".join(b"\x02" + s.encode() + b"\x03\r\n" for s in strings)
    with contextlib.suppress(ValueError):
        zs.to_device_status(zs.parse_host_status(data))


# -- Brother ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("byte", "bit"), [(1, b) for b in range(8)] + [(2, b) for b in range(8)])
def test_every_brother_error_bit_agrees_with_brother_ql(byte: int, bit: int) -> None:
    raw = bs.format_status(status_type=bs.TYPE_ERROR, **{f"error_{byte}": 1 << bit})
    theirs = interpret_response(raw)
    ours = bs.parse_status(raw)
    table = RESP_ERROR_INFORMATION_1_DEF if byte == 1 else RESP_ERROR_INFORMATION_2_DEF
    assert theirs["errors"] == [table[bit]]
    assert len(ours.errors) == 1
    status = bs.to_device_status(ours)
    assert status.faulted and status.reasons == ((bs.ERROR_1 if byte == 1 else bs.ERROR_2)[bit][1],)


@pytest.mark.parametrize("status_type", [0x00, 0x01, 0x02, 0x05, 0x06])
@pytest.mark.parametrize("phase", [bs.PHASE_WAITING, bs.PHASE_PRINTING])
def test_brother_status_and_phase_types_agree(status_type: int, phase: int) -> None:
    raw = bs.format_status(status_type=status_type, phase=phase)
    theirs = interpret_response(raw)
    assert theirs["status_type"] == {0: "Reply to status request", 1: "Printing completed", 2: "Error occurred",
                                     5: "Notification", 6: "Phase change"}[status_type]  # fmt: skip
    assert theirs["phase_type"] == ("Printing state" if phase else "Waiting to receive")
    ours = bs.to_device_status(bs.parse_status(raw))
    assert ours.state is (DeviceState.PRINTING if phase else DeviceState.READY)
    assert theirs["media_width"] == 62 and theirs["model_name"] == "QL-820NWB"


def test_brother_notifications_and_media() -> None:
    assert bs.to_device_status(bs.parse_status(bs.format_status(notification=1))).state is DeviceState.HEAD_OPEN
    assert bs.to_device_status(bs.parse_status(bs.format_status(notification=3))).state is DeviceState.OVERHEAT
    assert bs.to_device_status(bs.parse_status(bs.format_status(media_type=0))).state is DeviceState.MEDIA_OUT
    assert bs.to_device_status(bs.parse_status(bs.format_status(status_type=4))).state is DeviceState.OFFLINE


@given(st.binary(max_size=100))
def test_brother_parser_never_crashes(data: bytes) -> None:
    replies, rest = bs.split_replies(data)
    assert len(rest) <= bs.SIZE
    for raw in replies:
        assert isinstance(bs.to_device_status(bs.parse_status(raw)), DeviceStatus)


@given(st.binary(min_size=29, max_size=29))
def test_fuzzed_brother_replies_parse_like_brother_ql(tail: bytes) -> None:
    raw = bs.HEADER + tail
    ours = bs.parse_status(raw)
    assert isinstance(bs.to_device_status(ours), DeviceStatus)
    assert len(interpret_response(raw)["errors"]) == len(ours.errors)


# -- ESC/POS ---------------------------------------------------------------------------------------------------
ESCPOS_FAULTS = {
    "media_out": DeviceState.MEDIA_OUT,
    "head_open": DeviceState.HEAD_OPEN,
    "jam": DeviceState.JAM,
    "overheat": DeviceState.OVERHEAT,
    "paused": DeviceState.OFFLINE,
    None: DeviceState.READY,
}


@pytest.mark.parametrize("fault", list(ESCPOS_FAULTS))
def test_escpos_realtime_and_asb_agree(fault: str | None) -> None:
    rt = es.parse_realtime([es.format_realtime(n, fault) for n in (1, 2, 3, 4)])
    assert es.to_device_status(rt).state is ESCPOS_FAULTS[fault]
    assert es.asb_to_device_status(es.format_asb(fault)).state is ESCPOS_FAULTS[fault]


@pytest.mark.parametrize(
    ("n", "bit", "state"),
    [(1, 0x08, DeviceState.OFFLINE), (2, 0x04, DeviceState.HEAD_OPEN), (2, 0x20, DeviceState.MEDIA_OUT),
     (3, 0x04, DeviceState.ERROR), (3, 0x08, DeviceState.JAM), (3, 0x20, DeviceState.ERROR),
     (3, 0x40, DeviceState.OVERHEAT), (4, 0x60, DeviceState.MEDIA_OUT), (4, 0x0C, DeviceState.READY)],
)  # fmt: skip
def test_every_escpos_status_bit(n: int, bit: int, state: DeviceState) -> None:
    replies = [0x12, 0x12, 0x12, 0x12]
    replies[n - 1] |= bit
    status = es.to_device_status(es.parse_realtime(replies))
    assert status.state is state
    if (n, bit) == (4, 0x0C):
        assert status.detail["paper_near_end"]


def test_escpos_reply_stream_is_split() -> None:
    replies = es.Replies()
    rest = es.split_replies(b"\x12\x37\x22" + b"0042\x00" + b"\x1a\x37\x25\x00\x10\x00\x0f\x00\x37", replies)
    assert replies.realtime == [0x12, 0x1A] and replies.process_ids == [b"0042"]
    assert replies.cleared == 1 and replies.asb == [b"\x10\x00\x0f\x00"] and rest == b"\x37"


@given(st.binary(max_size=100))
def test_escpos_parsers_never_crash(data: bytes) -> None:
    replies = es.Replies()
    es.split_replies(data, replies)
    with contextlib.suppress(ValueError):
        es.to_device_status(es.parse_realtime(replies.realtime))
    for asb in replies.asb:
        es.asb_to_device_status(asb)


@pytest.mark.parametrize(
    ("fault", "online", "paper"), [(None, True, 2), ("media_out", False, 0), ("head_open", False, 2)]
)
async def test_python_escpos_reads_the_emulator(fault: str | None, online: bool, paper: int) -> None:
    """python-escpos, a real ESC/POS client, unchanged: is_online() and paper_status() against our emulator."""
    import asyncio

    printer = EscposPrinter("receipt", print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    printer.set_fault(fault)
    try:

        def query() -> tuple[bool, int]:
            client = Network(host, port=port, timeout=2)
            client.open()
            try:
                return client.is_online(), client.paper_status()
            finally:
                client.close()

        assert await asyncio.to_thread(query) == (online, paper)
    finally:
        await front.stop()
        await printer.stop()
