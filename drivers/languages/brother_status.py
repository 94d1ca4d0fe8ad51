"""Brother QL status: the 32-byte reply of the Raster Command Reference ("Status information request"),
sent in answer to ``ESC i S`` and unprompted when a print completes, an error occurs or the phase changes.

``brother_ql.reader.interpret_response`` (brother_ql-next) reads the same bytes; the tests hold both parsers to
the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.base import DeviceState, DeviceStatus

STATUS_REQUEST = b"\x1biS"
INITIALIZE = b"\x1b@"
SIZE = 32
HEADER = b"\x80\x20\x42"

ERROR_1: dict[int, tuple[DeviceState, str]] = {
    0: (DeviceState.MEDIA_OUT, "no media"),
    1: (DeviceState.MEDIA_OUT, "end of media (die-cut labels)"),
    2: (DeviceState.JAM, "cutter jam"),
    3: (DeviceState.ERROR, "unused error bit 1.3"),
    4: (DeviceState.ERROR, "main unit in use"),
    5: (DeviceState.OFFLINE, "printer turned off"),
    6: (DeviceState.ERROR, "high-voltage adapter"),
    7: (DeviceState.OVERHEAT, "fan does not work"),
}
ERROR_2: dict[int, tuple[DeviceState, str]] = {
    0: (DeviceState.MEDIA_OUT, "wrong media loaded (replace media)"),
    1: (DeviceState.ERROR, "expansion buffer full"),
    2: (DeviceState.ERROR, "transmission error"),
    3: (DeviceState.ERROR, "communication buffer full"),
    4: (DeviceState.HEAD_OPEN, "cover opened while printing"),
    5: (DeviceState.ERROR, "cancelled with the cancel key"),
    6: (DeviceState.JAM, "media cannot be fed (or media end)"),
    7: (DeviceState.ERROR, "system error"),
}
STATUS_TYPES = {
    0x00: "reply to status request",
    0x01: "printing completed",
    0x02: "error occurred",
    0x04: "turned off",
    0x05: "notification",
    0x06: "phase change",
}
PHASES = {0x00: "waiting to receive", 0x01: "printing"}
NOTIFICATIONS = {0x00: "", 0x01: "cover open", 0x02: "cover closed", 0x03: "cooling started", 0x04: "cooling finished"}
MEDIA_TYPES = {
    0x00: "no media",
    0x0A: "continuous tape",
    0x0B: "die-cut labels",
    0x4A: "continuous tape",
    0x4B: "die-cut labels",
}

TYPE_REPLY, TYPE_COMPLETED, TYPE_ERROR, TYPE_OFF, TYPE_NOTIFICATION, TYPE_PHASE = 0x00, 0x01, 0x02, 0x04, 0x05, 0x06
PHASE_WAITING, PHASE_PRINTING = 0x00, 0x01


@dataclass(frozen=True)
class BrotherStatus:
    model_code: int
    error_1: int
    error_2: int
    media_width_mm: int
    media_type: int
    mode: int
    media_length_mm: int
    status_type: int
    phase: int
    phase_number: int
    notification: int

    @property
    def errors(self) -> list[tuple[DeviceState, str]]:
        return [ERROR_1[b] for b in range(8) if self.error_1 >> b & 1] + [
            ERROR_2[b] for b in range(8) if self.error_2 >> b & 1
        ]


def split_replies(buf: bytes) -> tuple[list[bytes], bytes]:
    """Whole 32-byte replies in ``buf`` (resynchronising on the header) and the unfinished rest."""
    replies: list[bytes] = []
    while True:
        start = buf.find(HEADER)
        if start < 0:
            return replies, buf[-2:]  # a header may be split across reads
        if len(buf) - start < SIZE:
            return replies, buf[start:]
        replies.append(buf[start : start + SIZE])
        buf = buf[start + SIZE :]


def parse_status(data: bytes) -> BrotherStatus:
    if len(data) < SIZE or not data.startswith(HEADER):
        raise ValueError(f"not a Brother status reply: {data[:8].hex(' ')} ({len(data)} bytes)")
    return BrotherStatus(
        model_code=data[4],
        error_1=data[8],
        error_2=data[9],
        media_width_mm=data[10],
        media_type=data[11],
        mode=data[15],
        media_length_mm=data[17],
        status_type=data[18],
        phase=data[19],
        phase_number=data[20] << 8 | data[21],
        notification=data[22],
    )


def to_device_status(st: BrotherStatus) -> DeviceStatus:
    errors = st.errors
    detail: dict[str, object] = {
        "status_type": STATUS_TYPES.get(st.status_type, f"0x{st.status_type:02x}"),
        "phase": PHASES.get(st.phase, f"0x{st.phase:02x}"),
        "media": f"{st.media_width_mm} mm {MEDIA_TYPES.get(st.media_type, 'unknown media')}",
        "error_1": st.error_1,
        "error_2": st.error_2,
    }
    note = NOTIFICATIONS.get(st.notification, "")
    if st.status_type == TYPE_OFF:
        return DeviceStatus(DeviceState.OFFLINE, ("printer is turning off",), detail)
    if errors:
        reasons = tuple(reason for _, reason in errors)
        return DeviceStatus(errors[0][0], reasons, detail)
    if note == "cover open":
        return DeviceStatus(DeviceState.HEAD_OPEN, ("cover open",), detail)
    if note == "cooling started":
        return DeviceStatus(DeviceState.OVERHEAT, ("print head cooling",), detail)
    if st.media_type == 0x00:
        return DeviceStatus(DeviceState.MEDIA_OUT, ("no media loaded",), detail)
    if st.phase == PHASE_PRINTING:
        return DeviceStatus(DeviceState.PRINTING, (), detail)
    return DeviceStatus(DeviceState.READY, (), detail)


def format_status(
    *,
    status_type: int = TYPE_REPLY,
    phase: int = PHASE_WAITING,
    error_1: int = 0,
    error_2: int = 0,
    model_code: int = 0x41,  # QL-820NWB
    media_width_mm: int = 62,
    media_type: int = 0x0A,
    media_length_mm: int = 0,
    notification: int = 0,
) -> bytes:
    """A reply as the printer sends it (the emulator's side)."""
    reply = bytearray(SIZE)
    reply[0:8] = bytes([0x80, 0x20, 0x42, 0x34, model_code, 0x30, 0x30, 0x00])
    reply[8], reply[9] = error_1, error_2
    reply[10], reply[11] = media_width_mm, media_type
    reply[17], reply[18], reply[19] = media_length_mm, status_type, phase
    reply[22] = notification
    return bytes(reply)
