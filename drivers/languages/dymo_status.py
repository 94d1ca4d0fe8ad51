"""DYMO LabelWriter status and models: the one status byte of the 4xx series and the 32 bytes of the 550 series.

4xx (LabelWriter 400 Series Technical Reference Manual, "The Status Byte"): ``ESC A`` is answered with one byte:
bit 0 ready (always 1), bit 1 top of form (the label has been fed to the tear bar), bit 5 out of paper, bit 6 paper
jam, bit 7 error (also set with out of paper). DYMO's own CUPS language monitor (dymo-cups-drivers,
LabelWriterLanguageMonitor) names bit 3 "roll changed" (Twin Turbo) and waits, after each label, for top of form
or an error: so does this driver.

550 (LabelWriter 550 Series Technical Reference, as DYMO's V2 language monitor and the labelle project read it):
``ESC A n`` is answered with 32 bytes: print status (0 idle, 1 printing, 2 error, 3 cancel, 4 busy), the job id
of the print in progress (u32 LE), the label index (u16 LE), the print head's thermal status, print density, the
main bay's state (media present, empty, jammed, a roll it refuses), the roll's SKU, an error id, the labels left on
the roll (u16 LE), the power supply and the print head voltage.

Both generations are asked with ``ESC A 0``: a 4xx ignores the byte after ``ESC A`` (a character that is neither a
command nor raster data), a 550 reads it as "status without taking the lock". The reply's length says which
generation answered, which is how a printer reached over TCP without a configured model is told apart.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from drivers.base import DeviceState, DeviceStatus

VENDOR_ID = 0x0922
STATUS_REQUEST = b"\x1bA\x00"
#: "To reset the printer after a synchronization error or to recover from an unknown state, the host computer
#: needs to send at least 85 continuous <esc> characters" (400 Series manual): a half-sent raster line ends, and
#: the ``ESC @`` after it is read as a command, which drops what the printer holds.
RESYNC = b"\x1b" * 85
CANCEL = RESYNC + b"\x1b@"

# 4xx status bits
READY, TOP_OF_FORM, ROLL_CHANGED, PAPER_OUT, PAPER_JAM, ERROR = 0x01, 0x02, 0x08, 0x20, 0x40, 0x80
SIZE_550 = 32

GEN_4XX, GEN_550 = "4xx", "550"


@dataclass(frozen=True)
class Model:
    name: str
    head_dots: int  # dots across the print head at 300 dpi
    generation: str


#: LabelWriter models by name (what ``driver.model`` takes); the head is 672 dots (56 mm) but on the XL printers.
MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("LabelWriter 400", 672, GEN_4XX),
        Model("LabelWriter 400 Turbo", 672, GEN_4XX),
        Model("LabelWriter 450", 672, GEN_4XX),
        Model("LabelWriter 450 Turbo", 672, GEN_4XX),
        Model("LabelWriter 450 Twin Turbo", 672, GEN_4XX),
        Model("LabelWriter 450 Duo", 672, GEN_4XX),
        Model("LabelWriter 4XL", 1248, GEN_4XX),
        Model("LabelWriter SE450", 672, GEN_4XX),
        Model("LabelWriter Wireless", 672, GEN_4XX),
        Model("LabelWriter 550", 672, GEN_550),
        Model("LabelWriter 550 Turbo", 672, GEN_550),
        Model("LabelWriter 5XL", 1248, GEN_550),
    )
}
#: USB product ids of vendor 0x0922, as the USB ID Repository (usb.ids) lists them. A LabelWriter not listed here is
#: still driven: its generation is learnt from the length of its status reply and its head taken as 672 dots
#: unless ``driver.model`` names it.
PRODUCT_IDS: dict[int, str] = {
    0x0019: "LabelWriter 400",
    0x001A: "LabelWriter 400 Turbo",
    0x0020: "LabelWriter 450",
    0x0400: "LabelWriter SE450",
}
DEFAULT_4XX = "LabelWriter 450"
DEFAULT_550 = "LabelWriter 550"


def model_named(name: str) -> Model:
    """The model ``driver.model`` names (case and a leading "DYMO " do not matter).

    Raises:
        ValueError: no such LabelWriter.
    """
    wanted = name.strip().lower().removeprefix("dymo ").strip()
    for model in MODELS.values():
        if model.name.lower() in (wanted, f"labelwriter {wanted}"):
            return model
    raise ValueError(f"unknown DYMO model {name!r}; known: {', '.join(MODELS)}")


def model_for(product_id: int | None) -> Model | None:
    name = PRODUCT_IDS.get(product_id) if product_id is not None else None
    return MODELS[name] if name is not None else None


# -- 4xx ------------------------------------------------------------------------------------------------------------


def parse_4xx(byte: int) -> DeviceStatus:
    detail: dict[str, object] = {"status_byte": f"0x{byte:02x}", "top_of_form": bool(byte & TOP_OF_FORM)}
    faults: list[tuple[DeviceState, str]] = []
    if byte & PAPER_OUT:
        faults.append((DeviceState.MEDIA_OUT, "out of labels"))
    if byte & PAPER_JAM:
        faults.append((DeviceState.JAM, "label jam"))
    if byte & ERROR and not faults:
        faults.append((DeviceState.ERROR, "printer error (label release lever open, head too hot?)"))
    if faults:
        return DeviceStatus(faults[0][0], tuple(r for _, r in faults), detail)
    return DeviceStatus(DeviceState.READY, (), detail)


def format_4xx(fault: str | None, top_of_form: bool) -> int:
    """The byte a 4xx with ``fault`` answers to ``ESC A`` (the emulator's side). A LabelWriter has no cover or pause
    sensor of its own: a fault other than paper out or a jam shows as the error bit alone."""
    byte = READY | (TOP_OF_FORM if top_of_form and fault is None else 0)
    if fault == "media_out":
        byte |= PAPER_OUT | ERROR
    elif fault == "jam":
        byte |= PAPER_JAM | ERROR
    elif fault is not None:
        byte |= ERROR
    return byte


# -- 550 ------------------------------------------------------------------------------------------------------------

PRINT_STATUS = {0: "idle", 1: "printing", 2: "error", 3: "cancelled", 4: "busy", 5: "unlocked"}
BAY_STATUS = {
    0: "bay status unknown",
    1: "bay open",
    2: "no roll in the bay",
    3: "roll not inserted properly",
    4: "roll present, state unknown",
    5: "roll empty",
    6: "roll critically low",
    7: "roll low",
    8: "roll present",
    9: "roll jammed",
    10: "roll refused: not a DYMO roll the printer accepts",
}
_BAY_FAULTS = {
    1: DeviceState.HEAD_OPEN,
    2: DeviceState.MEDIA_OUT,
    3: DeviceState.MEDIA_OUT,
    5: DeviceState.MEDIA_OUT,
    9: DeviceState.JAM,
    10: DeviceState.MEDIA_OUT,
}
_LAYOUT = struct.Struct("<BIHBBBB12sIHBBB")  # 32 bytes


@dataclass(frozen=True)
class Status550:
    print_status: int
    job_id: int
    label_index: int
    head_status: int  # 0 ok, 1 overheated, 2 unknown
    density: int
    bay: int
    sku: str
    error_id: int
    labels_remaining: int
    power: int
    head_voltage: int  # 0 unknown, 1 ok, 2 low, 3 critically low, 4 too low to print


def parse_550(data: bytes) -> Status550:
    if len(data) < SIZE_550:
        raise ValueError(f"not a LabelWriter 550 status: {len(data)} bytes, 32 expected")
    fields = _LAYOUT.unpack(data[:SIZE_550])
    sku = fields[7].split(b"\x00")[0].decode("ascii", "replace")
    return Status550(*fields[:3], *fields[4:7], sku, *fields[8:12])  # type: ignore[call-arg]


def to_device_status_550(st: Status550) -> DeviceStatus:
    detail: dict[str, object] = {
        "print_status": PRINT_STATUS.get(st.print_status, f"0x{st.print_status:02x}"),
        "job_id": st.job_id,
        "media": BAY_STATUS.get(st.bay, f"bay state 0x{st.bay:02x}"),
        "sku": st.sku,
        "labels_remaining": st.labels_remaining,
    }
    faults: list[tuple[DeviceState, str]] = []
    if st.bay in _BAY_FAULTS:
        faults.append((_BAY_FAULTS[st.bay], BAY_STATUS[st.bay]))
    if st.head_status == 1:
        faults.append((DeviceState.OVERHEAT, "print head too hot"))
    if st.head_voltage == 4:
        faults.append((DeviceState.ERROR, "print head voltage too low to print (power supply?)"))
    if st.print_status == 2 and not faults:
        faults.append((DeviceState.ERROR, f"printer error {st.error_id:#x}"))
    if faults:
        return DeviceStatus(faults[0][0], tuple(r for _, r in faults), detail)
    low = (BAY_STATUS[st.bay],) if st.bay in (6, 7) else ()
    if st.print_status in (1, 4):
        return DeviceStatus(DeviceState.PRINTING, low, detail)
    return DeviceStatus(DeviceState.READY, low, detail)


def format_550(
    *,
    fault: str | None,
    printing: bool,
    job_id: int,
    label_index: int,
    labels_remaining: int,
    refused_roll: bool = False,
    sku: str = "30256",
) -> bytes:
    """A 32-byte status as a 550 sends it (the emulator's side)."""
    bay = {"media_out": 5, "jam": 9, "head_open": 1}.get(fault or "", 8)
    if refused_roll and fault is None:
        bay = 10
    elif bay == 8 and labels_remaining < 10:
        bay = 6 if labels_remaining < 3 else 7
    errored = fault is not None and fault not in ("no_answer", "power_off")
    print_status = 2 if errored else (1 if printing else 0)
    return _LAYOUT.pack(
        print_status,
        job_id if printing or errored else 0,
        label_index,
        0,
        1 if fault == "overheat" else 0,
        100,
        bay,
        sku.encode("ascii")[:12].ljust(12, b"\x00"),
        0x0101 if errored else 0,
        labels_remaining,
        1,
        1,
        0,
    )
