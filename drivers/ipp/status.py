"""What an IPP printer's attributes say, in the drivers' fault vocabulary, and which badge it can take.

``printer-state``, ``printer-state-reasons`` and ``printer-is-accepting-jobs`` become a :class:`DeviceStatus`;
``document-format-supported``, the resolutions and the media it reports ready become a :class:`Plan`: the format,
resolution and page a badge is drawn in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from drivers.base import DeviceState, DeviceStatus
from drivers.ipp import wire
from drivers.label import LabelConfig

#: Asked before every badge and at every probe: the state, and what the badge is drawn for.
PRINTER_ATTRIBUTES = [
    "printer-state",
    "printer-state-reasons",
    "printer-state-message",
    "printer-is-accepting-jobs",
    "document-format-supported",
    "printer-resolution-supported",
    "pwg-raster-document-resolution-supported",
    "pwg-raster-document-type-supported",
    "media-col-ready",
    "media-col-default",
    "media-ready",
    "media-default",
    "printer-make-and-model",
    "device-uri",
]

IDLE, PROCESSING, STOPPED = 3, 4, 5

#: Reasons (their suffix taken off) that stop a printer from printing, each as the fault staff know.
FAULTS: dict[str, tuple[DeviceState, str]] = {
    "media-empty": (DeviceState.MEDIA_OUT, "paper out"),
    "media-needed": (DeviceState.MEDIA_OUT, "paper out (media needed)"),
    "input-tray-missing": (DeviceState.MEDIA_OUT, "input tray missing"),
    "media-jam": (DeviceState.JAM, "paper jam"),
    "jam": (DeviceState.JAM, "paper jam"),
    "cover-open": (DeviceState.HEAD_OPEN, "cover open"),
    "door-open": (DeviceState.HEAD_OPEN, "door open"),
    "interlock-open": (DeviceState.HEAD_OPEN, "interlock open"),
    "offline": (DeviceState.OFFLINE, "offline"),
    "shutdown": (DeviceState.OFFLINE, "shut down"),
    "timed-out": (DeviceState.OFFLINE, "the printer behind the queue does not answer"),
    "paused": (DeviceState.PAUSED, "paused"),
    "moving-to-paused": (DeviceState.PAUSED, "pausing"),
    "marker-supply-empty": (DeviceState.RIBBON_OUT, "toner or ink empty"),
    "toner-empty": (DeviceState.RIBBON_OUT, "toner empty"),
    "marker-waste-full": (DeviceState.ERROR, "waste toner or ink full"),
    "spool-area-full": (DeviceState.ERROR, "spool area full"),
}
#: Severity order for the dominant state, as DeviceStatus documents it (a fault wins; most severe first).
_ORDER = [
    DeviceState.OFFLINE,
    DeviceState.JAM,
    DeviceState.HEAD_OPEN,
    DeviceState.MEDIA_OUT,
    DeviceState.RIBBON_OUT,
    DeviceState.ERROR,
    DeviceState.PAUSED,
]
#: The only reasons without a suffix that are not faults (RFC 8011: a reason without a suffix is an error).
_BENIGN = re.compile(r"^(none|identify-printer-requested|printer-restarted|cups-.*|com\.apple\..*)$")


def split_reason(reason: str) -> tuple[str, str]:
    """``media-empty-error`` -> (``media-empty``, ``error``); a reason without a suffix counts as an error."""
    for suffix in ("-error", "-warning", "-report"):
        if reason.endswith(suffix):
            return reason[: -len(suffix)], suffix[1:]
    return reason, "error"


def fault_reasons(values: wire.Values) -> list[str]:
    """The state reasons that stop printing: any ``-error`` (or unsuffixed) reason, and the faults named above
    whatever their suffix: a printer that says ``media-empty-report`` (ippeveprinter does, while idle) would hold a
    badge sent to it until paper is loaded, so it takes none until it stops saying so."""
    faults = []
    for reason in values.get("printer-state-reasons", []):
        if not isinstance(reason, str):
            continue
        base, level = split_reason(reason)
        if base in FAULTS or (level == "error" and not _BENIGN.match(reason)):
            faults.append(reason)
    return faults


def to_device_status(values: wire.Values) -> DeviceStatus:
    state = wire.first(values, "printer-state", 0)
    faults = fault_reasons(values)
    accepting = wire.first(values, "printer-is-accepting-jobs", True)
    states: list[DeviceState] = []
    words: list[str] = []
    for reason in faults:
        fault, word = FAULTS.get(split_reason(reason)[0], (DeviceState.ERROR, reason))
        states.append(fault)
        words.append(word if word == reason else f"{word} ({reason})")
    if state == STOPPED and not states:
        message = wire.first(values, "printer-state-message", "")
        states.append(DeviceState.PAUSED)
        words.append("printer stopped" + (f": {message}" if message else ""))
    if accepting is False:
        states.append(DeviceState.PAUSED)
        words.append("not accepting jobs")
    detail: dict[str, Any] = {
        "printer_state": {IDLE: "idle", PROCESSING: "processing", STOPPED: "stopped"}.get(state, str(state)),
        "reasons": [r for r in values.get("printer-state-reasons", []) if isinstance(r, str)],
    }
    if states:
        dominant = min(states, key=_ORDER.index)
        return DeviceStatus(dominant, tuple(words), detail)
    if state == PROCESSING:
        return DeviceStatus(DeviceState.PRINTING, (), detail)
    if state == IDLE:
        return DeviceStatus(DeviceState.READY, (), detail)
    return DeviceStatus(DeviceState.UNKNOWN, (f"printer-state {state!r} is not an IPP printer state",), detail)


def confirmed_by(values: wire.Values) -> str:
    """``device`` when the printer's own state confirms each badge: an IPP printer, or a CUPS queue whose backend
    talks IPP to the printer (and waits for its job); ``spooler`` when the queue's backend cannot read the device
    (``usb://``, ``socket://``, ``lpd://``, ``file:``...): then "completed" means CUPS handed the bytes on."""
    device_uri = wire.first(values, "device-uri")
    if not isinstance(device_uri, str) or not device_uri:
        return "device"
    scheme = urlsplit(device_uri).scheme.lower()
    return "device" if scheme in ("ipp", "ipps", "dnssd", "implicitclass") else "spooler"


# -- what the badge is drawn in ------------------------------------------------------------------------------------

PWG_RASTER = "image/pwg-raster"
PNG = "image/png"
JPEG = "image/jpeg"
#: Formats a badge can be sent in, best first: PWG raster is the one every IPP Everywhere printer takes and is
#: exact 1-bit; PNG and JPEG are drawn as the same 1-bit picture.
FORMATS = (PWG_RASTER, PNG, JPEG)
_MM_PER_INCH = 25.4


@dataclass(frozen=True)
class Plan:
    """How a badge is drawn and sent: the document format, resolution and page (hundredths of a mm, as IPP)."""

    format: str
    dpi: int
    width: int
    height: int
    margins: tuple[int, int, int, int] = (0, 0, 0, 0)  # left, top, right, bottom
    raster_type: str = "black_1"
    media_name: str = ""

    @property
    def label(self) -> LabelConfig:
        """The printable area as a label: what the badge is drawn on."""
        left, top, right, bottom = self.margins
        return LabelConfig(
            width_mm=(self.width - left - right) / 100, height_mm=(self.height - top - bottom) / 100, dpi=self.dpi
        )

    def header(self) -> bytes:
        """The first line of the rendered bytes: what ``print`` sends them as (drawn ahead, they keep it)."""
        return f"{self.format} {self.width}x{self.height} {self.media_name}\n".encode()


def _media(values: wire.Values) -> tuple[int, int, tuple[int, int, int, int], str] | None:
    for name in ("media-col-ready", "media-col-default"):
        for col in values.get(name, []):
            if not isinstance(col, dict):
                continue
            size = wire.first(col, "media-size")
            if not isinstance(size, dict):
                continue
            x, y = wire.first(size, "x-dimension"), wire.first(size, "y-dimension")
            if not (isinstance(x, int) and isinstance(y, int) and x > 0 and y > 0):
                continue  # a roll reports a range for its length: the config's label stands then
            margins = tuple(
                int(wire.first(col, f"media-{side}-margin", 0) or 0) for side in ("left", "top", "right", "bottom")
            )
            return x, y, (margins[0], margins[1], margins[2], margins[3]), str(wire.first(col, "media-size-name", ""))
    for name in ("media-ready", "media-default"):
        for keyword in values.get(name, []):
            size = media_size_from_name(keyword) if isinstance(keyword, str) else None
            if size is not None:
                return size[0], size[1], (0, 0, 0, 0), keyword
    return None


def media_size_from_name(name: str) -> tuple[int, int] | None:
    """A PWG self-describing media name's size (``na_letter_8.5x11in``, ``om_badge_54x86mm``) in 1/100 mm."""
    match = re.search(r"_(\d+(?:\.\d+)?)x(\d+(?:\.\d+)?)(mm|in)$", name)
    if match is None:
        return None
    scale = 2540 if match.group(3) == "in" else 100
    return round(float(match.group(1)) * scale), round(float(match.group(2)) * scale)


def _pick_dpi(resolutions: list[Any], fallback: int) -> int:
    """The lowest resolution of at least 300 dpi (sharp text and QR modules, small documents), else the highest."""
    dpis = sorted({r.dpi for r in resolutions if isinstance(r, wire.Resolution) and 100 <= r.dpi <= 600})
    if not dpis:
        return fallback
    return next((d for d in dpis if d >= 300), dpis[-1])


def plan(values: wire.Values, label: LabelConfig) -> Plan | str:
    """The format, resolution and page a badge is drawn in, or why this printer cannot take one."""
    formats = [f.lower() for f in values.get("document-format-supported", []) if isinstance(f, str)]
    fmt = next((f for f in FORMATS if f in formats), None)
    if fmt is None:
        listed = ", ".join(formats) or "none"
        return f"the printer takes none of {', '.join(FORMATS)} (it lists {listed})"
    raster_type = "black_1"
    if fmt == PWG_RASTER:
        types = values.get("pwg-raster-document-type-supported", [])
        raster_type = "black_1" if "black_1" in types else "sgray_8"
        dpi = _pick_dpi(values.get("pwg-raster-document-resolution-supported", []), label.dpi)
    else:
        dpi = _pick_dpi(values.get("printer-resolution-supported", []), label.dpi)
    media = _media(values)
    if media is None:
        width, height = round(label.width_mm * 100), round(label.height_mm * 100)
        return Plan(fmt, dpi, width, height, raster_type=raster_type)
    width, height, margins, name = media
    return Plan(fmt, dpi, width, height, margins, raster_type, name)
