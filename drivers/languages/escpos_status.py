"""ESC/POS real-time status (``DLE EOT n``), Automatic Status Back (``GS a``) and the two replies of the buffer
and process commands (Epson ESC/POS Application Programming Guide):

* ``DLE EOT 1..4``: one byte each, bits 1 and 4 fixed to 1, bits 0 and 7 fixed to 0 (``0xx1xx10``);
* ASB: four bytes, the first ``0xx1xx00``;
* ``GS ( H`` fn=48 process ID response: ``37 22 d1 d2 d3 d4 00``, sent when everything before it has printed;
* ``DLE DC4`` fn=8 clear buffers response: ``37 25 00``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drivers.base import DeviceState, DeviceStatus

DLE_EOT = b"\x10\x04"
STATUS_REQUESTS = DLE_EOT + b"\x01" + DLE_EOT + b"\x02" + DLE_EOT + b"\x03" + DLE_EOT + b"\x04"
CLEAR_BUFFERS = b"\x10\x14\x08\x01\x03\x14\x01\x06\x02\x08"
CLEAR_RESPONSE = b"\x37\x25\x00"


def process_id_request(token: bytes) -> bytes:
    if len(token) != 4 or any(not 0x30 <= b <= 0x39 for b in token):
        raise ValueError("a process ID is four ASCII digits")
    return b"\x1d\x28\x48\x06\x00\x30\x30" + token


@dataclass
class Replies:
    """Printer-to-host messages, split out of the byte stream in arrival order."""

    realtime: list[int] = field(default_factory=list)
    asb: list[bytes] = field(default_factory=list)
    process_ids: list[bytes] = field(default_factory=list)
    cleared: int = 0


def split_replies(buf: bytes, into: Replies) -> bytes:
    """Move whole messages of ``buf`` into ``into``; return the unfinished rest."""
    i = 0
    while i < len(buf):
        byte = buf[i]
        if byte == 0x37:
            if len(buf) - i < 2:
                break
            size = {0x22: 7, 0x25: 3}.get(buf[i + 1], 1)
            if len(buf) - i < size:
                break
            if size == 7:
                into.process_ids.append(buf[i + 2 : i + 6])
            elif size == 3:
                into.cleared += 1
            i += size
        elif byte & 0x93 == 0x12:
            into.realtime.append(byte)
            i += 1
        elif byte & 0x93 == 0x10:
            if len(buf) - i < 4:
                break
            into.asb.append(buf[i : i + 4])
            i += 4
        else:
            i += 1  # noise on the line: skip it, never guess a state from it
    return buf[i:]


@dataclass(frozen=True)
class RealtimeStatus:
    printer: int  # n=1
    offline_cause: int  # n=2
    error_cause: int  # n=3
    paper: int  # n=4


def _check(byte: int, n: int) -> int:
    if byte & 0x93 != 0x12:
        raise ValueError(f"DLE EOT {n} reply 0x{byte:02x} lacks the fixed bits")
    return byte


def parse_realtime(replies: list[int]) -> RealtimeStatus:
    if len(replies) < 4:
        raise ValueError(f"{len(replies)} of 4 DLE EOT replies")
    a, b, c, d = replies[-4:]
    return RealtimeStatus(_check(a, 1), _check(b, 2), _check(c, 3), _check(d, 4))


def _faults(
    offline: bool,
    cover: bool,
    paper_end: bool,
    near_end: bool,
    cutter: bool,
    unrecoverable: bool,
    auto: bool,
    mech: bool,
) -> DeviceStatus:
    faults: list[tuple[DeviceState, str]] = []
    if cover:
        faults.append((DeviceState.HEAD_OPEN, "cover open"))
    if paper_end:
        faults.append((DeviceState.MEDIA_OUT, "out of paper"))
    if cutter:
        faults.append((DeviceState.JAM, "autocutter error (paper jam?)"))
    if auto:
        faults.append((DeviceState.OVERHEAT, "auto-recoverable error (print head too hot?)"))
    if unrecoverable:
        faults.append((DeviceState.ERROR, "unrecoverable error"))
    if mech:
        faults.append((DeviceState.ERROR, "mechanical error"))
    if offline and not faults:
        faults.append((DeviceState.OFFLINE, "printer is offline"))
    detail = {"paper_near_end": near_end}
    if faults:
        reasons = tuple(r for _, r in faults) + (("paper nearly out",) if near_end else ())
        return DeviceStatus(faults[0][0], reasons, detail)
    return DeviceStatus(DeviceState.READY, ("paper nearly out",) if near_end else (), detail)


def to_device_status(rt: RealtimeStatus) -> DeviceStatus:
    return _faults(
        offline=bool(rt.printer & 0x08),
        cover=bool(rt.offline_cause & 0x04),
        paper_end=bool(rt.offline_cause & 0x20) or (rt.paper & 0x60) == 0x60,
        near_end=(rt.paper & 0x0C) == 0x0C,
        cutter=bool(rt.error_cause & 0x08),
        unrecoverable=bool(rt.error_cause & 0x20),
        auto=bool(rt.error_cause & 0x40),
        mech=bool(rt.error_cause & 0x04),
    )


def asb_to_device_status(asb: bytes) -> DeviceStatus:
    if len(asb) != 4 or asb[0] & 0x93 != 0x10:
        raise ValueError(f"not an ASB status: {asb.hex(' ')}")
    return _faults(
        offline=bool(asb[0] & 0x08),
        cover=bool(asb[0] & 0x20),
        paper_end=bool(asb[2] & 0x0C),
        near_end=bool(asb[2] & 0x03),
        cutter=bool(asb[1] & 0x08),
        unrecoverable=bool(asb[1] & 0x20),
        auto=bool(asb[1] & 0x40),
        mech=bool(asb[1] & 0x04),
    )


def format_realtime(n: int, fault: str | None) -> int:
    """The byte a printer with ``fault`` answers to ``DLE EOT n`` (the emulator's side)."""
    offline = fault in ("media_out", "head_open", "jam", "overheat", "paused")
    if n == 1:
        return 0x12 | (0x08 if offline else 0) | (0x20 if fault == "paused" else 0)
    if n == 2:
        error = fault in ("jam", "overheat")
        return (
            0x12
            | (0x04 if fault == "head_open" else 0)
            | (0x20 if fault == "media_out" else 0)
            | (0x40 if error else 0)
        )
    if n == 3:
        return 0x12 | (0x08 if fault == "jam" else 0) | (0x40 if fault == "overheat" else 0)
    if n == 4:
        return 0x12 | (0x6C if fault == "media_out" else 0)
    raise ValueError(f"DLE EOT {n} is not emulated")


def format_asb(fault: str | None) -> bytes:
    offline = fault in ("media_out", "head_open", "jam", "overheat", "paused")
    first = 0x10 | (0x08 if offline else 0) | (0x20 if fault == "head_open" else 0)
    second = (0x08 if fault == "jam" else 0) | (0x40 if fault == "overheat" else 0)
    third = 0x0F if fault == "media_out" else 0x00
    return bytes([first, second, third, 0x00])
