"""Zebra status replies: ``~HS`` (host status, three framed strings), ``~HQES`` (error/warning bit masks) and the
SGD label counter (``odometer.total_label_count``), as published in the ZPL II Programming Guide.

Parsers raise ``ValueError`` for anything that is not a whole, well-formed reply; callers treat that like silence
("possibly faulted"), never as a state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drivers.base import DeviceState, DeviceStatus

STX, ETX = b"\x02", b"\x03"
HOST_STATUS = b"~HS"
HOST_QUERY_ERRORS = b"~HQES"
CANCEL_ALL = b"~JA"


def sgd_getvar(name: str) -> bytes:
    """An SGD ``getvar`` (Link-OS printers answer ``"value"``; older ones stay silent)."""
    return f'! U1 getvar "{name}"\r\n'.encode("ascii")


LABEL_COUNTER = sgd_getvar("odometer.total_label_count")
SERIAL_NUMBER = sgd_getvar("device.unique_id")


@dataclass(frozen=True)
class HostStatus:
    """The fields of the three ``~HS`` strings (names follow the ZPL guide)."""

    interface: int  # aaa
    paper_out: bool  # b
    paused: bool  # c
    label_length: int  # dddd, dots
    formats_in_buffer: int  # eee
    buffer_full: bool  # f
    comm_diag_mode: bool  # g
    partial_format: bool  # h
    corrupt_ram: bool  # j
    under_temperature: bool  # k
    over_temperature: bool  # l
    function_settings: int  # mmm
    head_up: bool  # o
    ribbon_out: bool  # p
    thermal_transfer: bool  # q
    print_mode: str  # r
    print_width_mode: int  # s
    label_waiting: bool  # t (peel-off: a label waits to be taken)
    labels_remaining: int  # uuuuuuuu, labels left in the batch being printed
    format_while_printing: bool  # v
    graphics_stored: int  # www
    password: int  # xxxx
    static_ram: bool  # y


_FRAME = re.compile(rb"\x02([^\x02\x03]*)\x03")


def host_status_complete(buf: bytes) -> bool:
    return len(_FRAME.findall(buf)) >= 3


def _int(text: str, name: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"~HS field {name} is not a number: {text!r}")
    return int(text)


def _flag(text: str, name: str) -> bool:
    value = text.strip()
    if value not in ("0", "1"):
        raise ValueError(f"~HS flag {name} is not 0/1: {text!r}")
    return value == "1"


def parse_host_status(data: bytes) -> HostStatus:
    frames = [f.decode("ascii", "replace").split(",") for f in _FRAME.findall(data)]
    if len(frames) < 3:
        raise ValueError(f"~HS reply has {len(frames)} of 3 strings")
    s1, s2, s3 = frames[-3:]  # the latest complete reply, should stale ones precede it
    if len(s1) != 12 or len(s2) != 11 or len(s3) != 2:
        raise ValueError(f"~HS reply has {len(s1)}/{len(s2)}/{len(s3)} fields, expected 12/11/2")
    return HostStatus(
        interface=_int(s1[0], "aaa"),
        paper_out=_flag(s1[1], "paper out"),
        paused=_flag(s1[2], "pause"),
        label_length=_int(s1[3], "label length"),
        formats_in_buffer=_int(s1[4], "formats in buffer"),
        buffer_full=_flag(s1[5], "buffer full"),
        comm_diag_mode=_flag(s1[6], "diagnostic mode"),
        partial_format=_flag(s1[7], "partial format"),
        corrupt_ram=_flag(s1[9], "corrupt RAM"),
        under_temperature=_flag(s1[10], "under temperature"),
        over_temperature=_flag(s1[11], "over temperature"),
        function_settings=_int(s2[0], "function settings"),
        head_up=_flag(s2[2], "head up"),
        ribbon_out=_flag(s2[3], "ribbon out"),
        thermal_transfer=_flag(s2[4], "thermal transfer"),
        print_mode=s2[5].strip(),
        print_width_mode=_int(s2[6], "print width mode"),
        label_waiting=_flag(s2[7], "label waiting"),
        labels_remaining=_int(s2[8], "labels remaining"),
        format_while_printing=_flag(s2[9], "format while printing"),
        graphics_stored=_int(s2[10], "graphics stored"),
        password=_int(s3[0], "password"),
        static_ram=_flag(s3[1], "static RAM"),
    )


# ~HQES error bits (second 8-digit group), ZPL guide "~HQ host query", error flags table.
HQES_ERRORS: dict[int, tuple[DeviceState, str]] = {
    0x00000001: (DeviceState.MEDIA_OUT, "media out"),
    0x00000002: (DeviceState.RIBBON_OUT, "ribbon out"),
    0x00000004: (DeviceState.HEAD_OPEN, "head open"),
    0x00000008: (DeviceState.JAM, "cutter fault"),
    0x00000010: (DeviceState.OVERHEAT, "printhead over temperature"),
    0x00000020: (DeviceState.OVERHEAT, "motor over temperature"),
    0x00000040: (DeviceState.ERROR, "bad printhead element"),
    0x00000080: (DeviceState.ERROR, "printhead detection error"),
    0x00000100: (DeviceState.ERROR, "invalid firmware configuration"),
    0x00000200: (DeviceState.ERROR, "printhead thermistor open"),
    0x00001000: (DeviceState.JAM, "paper jam"),
    0x00002000: (DeviceState.ERROR, "presenter not running"),
    0x00004000: (DeviceState.JAM, "paper feed error"),
    0x00008000: (DeviceState.JAM, "clear paper path failed"),
    0x00010000: (DeviceState.PAUSED, "paused"),
    0x00020000: (DeviceState.ERROR, "retract function timed out"),
    0x00040000: (DeviceState.ERROR, "black mark calibrate error"),
    0x00080000: (DeviceState.ERROR, "black mark not found"),
}
HQES_WARNINGS: dict[int, str] = {
    0x00000001: "media needs calibrating",
    0x00000002: "clean the printhead",
    0x00000004: "replace the printhead",
    0x00000008: "labels nearly out",
    0x00000010: "sensor 1 (paper before head)",
    0x00000020: "sensor 2 (black mark)",
    0x00000040: "sensor 3 (paper after head)",
    0x00000080: "sensor 4 (loop ready)",
    0x00000100: "sensor 5 (presenter)",
    0x00000200: "sensor 6 (retract ready)",
    0x00000400: "sensor 7 (in retract)",
    0x00000800: "sensor 8 (at bin)",
}

_HQES = re.compile(rb"(ERRORS|WARNINGS):\s+([01])\s+([0-9A-Fa-f]{8})\s+([0-9A-Fa-f]{8})")


def hqes_complete(buf: bytes) -> bool:
    return b"WARNINGS" in buf and buf.rstrip().endswith(ETX)


@dataclass(frozen=True)
class ErrorStatus:
    errors: int
    warnings: int


def parse_hqes(data: bytes) -> ErrorStatus:
    found = {m.group(1): m for m in _HQES.finditer(data)}
    if b"ERRORS" not in found or b"WARNINGS" not in found:
        raise ValueError("~HQES reply lacks the ERRORS and WARNINGS lines")
    err, warn = found[b"ERRORS"], found[b"WARNINGS"]
    errors = int(err.group(4), 16) if err.group(2) == b"1" else 0
    warnings = int(warn.group(4), 16) if warn.group(2) == b"1" else 0
    return ErrorStatus(errors, warnings)


_COUNTER = re.compile(rb'"(\d{1,12})"')
_SGD_VALUE = re.compile(rb'"([^"]*)"')


def sgd_complete(buf: bytes) -> bool:
    return _SGD_VALUE.search(buf) is not None


def parse_sgd(data: bytes) -> str:
    """The value of an SGD ``getvar`` answer; ValueError for silence, an empty value or ``"?"`` (unknown name)."""
    match = _SGD_VALUE.search(data)
    value = match.group(1).decode("ascii", "replace").strip() if match else ""
    if not value or value == "?":
        raise ValueError(f"no SGD value in {data[:40]!r}")
    return value


def parse_label_counter(data: bytes) -> int:
    match = _COUNTER.search(data)
    if match is None:
        raise ValueError("no label counter in the reply")
    return int(match.group(1))


_SEVERITY = [
    DeviceState.OFFLINE,
    DeviceState.HEAD_OPEN,
    DeviceState.MEDIA_OUT,
    DeviceState.RIBBON_OUT,
    DeviceState.JAM,
    DeviceState.OVERHEAT,
    DeviceState.ERROR,
    DeviceState.PAUSED,
]


def to_device_status(hs: HostStatus, es: ErrorStatus | None = None) -> DeviceStatus:
    """Fold the flags into one state (most severe fault first) with every reason listed."""
    faults: list[tuple[DeviceState, str]] = []
    if hs.head_up:
        faults.append((DeviceState.HEAD_OPEN, "print head open"))
    if hs.paper_out:
        faults.append((DeviceState.MEDIA_OUT, "out of labels"))
    if hs.ribbon_out:
        faults.append((DeviceState.RIBBON_OUT, "ribbon out"))
    if hs.over_temperature:
        faults.append((DeviceState.OVERHEAT, "print head too hot"))
    if hs.under_temperature:
        faults.append((DeviceState.ERROR, "print head too cold"))
    if hs.corrupt_ram:
        faults.append((DeviceState.ERROR, "printer memory corrupt (settings lost)"))
    if hs.comm_diag_mode:
        faults.append((DeviceState.ERROR, "communications diagnostic mode is on (prints a hex dump)"))
    if hs.paused:
        faults.append((DeviceState.PAUSED, "paused"))
    if es is not None:
        faults += [fault for bit, fault in HQES_ERRORS.items() if es.errors & bit]
    detail: dict[str, object] = {
        "formats_in_buffer": hs.formats_in_buffer,
        "labels_remaining": hs.labels_remaining,
        "buffer_full": hs.buffer_full,
        "partial_format": hs.partial_format,
    }
    if es is not None:
        detail["hqes_errors"] = f"{es.errors:08X}"
        detail["warnings"] = [text for bit, text in HQES_WARNINGS.items() if es.warnings & bit]
    if faults:
        faults.sort(key=lambda f: _SEVERITY.index(f[0]))
        reasons = tuple(dict.fromkeys(reason for _, reason in faults))
        return DeviceStatus(faults[0][0], reasons, detail)
    busy = hs.formats_in_buffer > 0 or hs.labels_remaining > 0 or hs.partial_format
    if busy:
        return DeviceStatus(DeviceState.PRINTING, (), detail)
    return DeviceStatus(DeviceState.READY, (), detail)


def format_host_status(hs: HostStatus) -> bytes:
    """The reply bytes a printer in this state sends (used by the emulator and by round-trip tests)."""

    def b(flag: bool) -> str:
        return "1" if flag else "0"

    s1 = (
        f"{hs.interface:03d},{b(hs.paper_out)},{b(hs.paused)},{hs.label_length:04d},{hs.formats_in_buffer:03d},"
        f"{b(hs.buffer_full)},{b(hs.comm_diag_mode)},{b(hs.partial_format)},000,{b(hs.corrupt_ram)},"
        f"{b(hs.under_temperature)},{b(hs.over_temperature)}"
    )
    s2 = (
        f"{hs.function_settings:03d},0,{b(hs.head_up)},{b(hs.ribbon_out)},{b(hs.thermal_transfer)},{hs.print_mode},"
        f"{hs.print_width_mode},{b(hs.label_waiting)},{hs.labels_remaining:08d},{b(hs.format_while_printing)},"
        f"{hs.graphics_stored:03d}"
    )
    s3 = f"{hs.password:04d},{b(hs.static_ram)}"
    return b"".join(STX + s.encode("ascii") + ETX + b"\r\n" for s in (s1, s2, s3))


def format_hqes(errors: int, warnings: int) -> bytes:
    return (
        b"\x02\r\n  PRINTER STATUS\r\n"
        + f"   ERRORS:         {1 if errors else 0} 00000000 {errors:08X}\r\n".encode()
        + f"   WARNINGS:       {1 if warnings else 0} 00000000 {warnings:08X}\r\n".encode()
        + b"\x03\r\n"
    )
