"""Ask a byte stream, language by language, what printer answers on it.

The order keeps every question harmless to the printers not yet ruled out: ESC/POS real-time status first
(``DLE EOT 1``: Zebras ignore bytes outside a format, Brothers skip unknown bytes), then Brother's status
request (``ESC i S``; on an ESC/POS printer ``ESC i`` would cut, which is why ESC/POS is ruled out first), then
ZPL ``~HS`` and ``~HI`` (an ESC/POS printer would print them as text; it was ruled out before). Once the language
is known, the printer is asked what that language lets it tell: an ESC/POS printer ``GS I`` (model, firmware,
serial number) and its paper width, a Zebra ``~HI`` and its serial number (SGD ``device.unique_id``). A Brother's
status names its model and loaded roll; it reports no firmware or serial number over the print port.

TSPL is asked last and only where the caller allows it (a serial port or a network host the user named, a TSC USB
device): ``~!T`` on a printer of another language would come out as text. Its line starts with CR LF, so the
questions before it (no TSPL command) end as a line the printer ignores. DYMO LabelWriters answer none of these:
they are found by their USB vendor id and asked ``ESC A 0`` (:func:`identify_dymo`), or, on a network host the user
named that answered nothing else, asked it last.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from drivers.base import DriverError
from drivers.languages import brother_status as bs
from drivers.languages import dymo_status as ds
from drivers.languages import escpos_info as ei
from drivers.languages import tspl_status as ts
from drivers.languages import zpl_status as zs
from drivers.languages.escpos_status import DLE_EOT
from drivers.transports.base import Transport

_ZPL_INFO = b"~HI"  # host identification: model, firmware, dots/mm, memory

Ask = Callable[[bytes, Callable[[bytes], bool], float], Awaitable[bytes]]


@dataclass
class Found:
    """One printer as detect reports it; ``driver`` is the config section that reaches it."""

    transport: str
    address: str
    language: str
    model: str = ""
    firmware: str = ""
    serial_number: str = ""
    media: str = ""
    #: The name the printer announces itself under over mDNS (e.g. "Zebra ZT410"), when it was found that way.
    announced: str = ""
    #: An IPP printer's state as it reports it ("idle", "stopped (media-empty)"); "" for the other languages.
    state: str = ""
    #: Whose word its prints would be on (``device``; ``spooler`` for a CUPS queue that cannot read its printer);
    #: "" where detect does not say (every native language confirms by the device).
    confirmed_by: str = ""
    driver: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def found(transport: str, address: str, what: dict[str, str], **link: Any) -> Found:
    """A Found for ``what`` identify() learnt, with the driver section that reaches it over ``link``."""
    driver: dict[str, Any] = {"language": what["language"], "transport": transport, **link}
    if what["language"] == "brother_ql" and what.get("model", "").startswith("QL-"):
        driver["model"] = what["model"]
    if what["language"] == "dymo" and what.get("model", "") in ds.MODELS:
        driver["model"] = what["model"]
    return Found(transport=transport, address=address, driver=driver, **what)


def _brother_model(code: int) -> str:
    # brother_ql's status model codes (byte 4 of the reply), e.g. 0x41 = QL-820NWB.
    from brother_ql.reader import RESP_MODEL_CODES

    return str(RESP_MODEL_CODES.get(code, f"Brother QL (model code 0x{code:02x})"))


def _escpos_realtime(reply: bytes) -> bool:
    # DLE EOT 1: bit 1 set, bits 0, 4 and 7 as fixed by the ESC/POS reference.
    return len(reply) == 1 and reply[0] & 0x93 == 0x12


def _escpos(info: ei.PrinterInfo) -> dict[str, str]:
    what = {"language": "escpos", "model": " ".join(x for x in (info.maker, info.model) if x) or "ESC/POS printer"}
    if info.firmware:
        what["firmware"] = info.firmware
    if info.serial_number:
        what["serial_number"] = info.serial_number
    if info.paper_mm is not None:
        what["media"] = f"{info.paper_mm} mm paper ({ei.printable_mm(info.paper_mm)} mm printable)"
    return what


async def identify_dymo(ask: Ask, timeout: float, product_id: int | None) -> dict[str, str] | None:
    """A LabelWriter: its model from the USB product id (else its protocol from the length of its status reply),
    and from a 550 the roll and the labels left on it; None when it did not answer."""
    reply = await ask(ds.STATUS_REQUEST, lambda b: len(b) >= ds.SIZE_550, timeout)
    if not reply:
        return None
    model = ds.model_for(product_id)
    generation = ds.GEN_550 if len(reply) >= ds.SIZE_550 else ds.GEN_4XX
    name = model.name if model is not None else f"DYMO LabelWriter ({generation})"
    what = {"language": "dymo", "model": name}
    if generation == ds.GEN_550:
        st = ds.parse_550(reply)
        what["media"] = f"{ds.BAY_STATUS.get(st.bay, 'roll state unknown')}, {st.labels_remaining} labels left"
    return what


async def identify_tspl(ask: Ask, timeout: float) -> dict[str, str] | None:
    reply = await ask(b"\r\n" + ts.STATUS_REQUEST, lambda b: len(b) >= 1, timeout)
    if len(reply) != 1:
        return None
    model = ts.parse_model(await ask(ts.MODEL_REQUEST, lambda b: b"\r" in b, timeout))
    if model is None and ts.parse_status(reply[0]).ready:
        return None  # a ready TSPL printer names itself: a lone byte and silence is something else
    return {"language": "tspl", "model": model or "TSPL printer", "media": ts.parse_status(reply[0]).describe()}


async def identify(ask: Ask, timeout: float, tspl: bool = False, dymo: bool = False) -> dict[str, str] | None:
    """Language, model, firmware and media of the printer behind ``ask``; None when nothing answered. ``tspl`` and
    ``dymo``: the caller allows asking those last (a port the user named).

    ``ask(question, complete, timeout)`` writes ``question`` and returns what came back once ``complete`` holds
    or the timeout passed.
    """
    reply = await ask(DLE_EOT + b"\x01", lambda b: len(b) >= 1, timeout)
    if _escpos_realtime(reply):
        return _escpos(await ei.read_info(ask, timeout))
    reply = await ask(bs.STATUS_REQUEST, lambda b: len(bs.split_replies(b)[0]) > 0, timeout)
    replies, _ = bs.split_replies(reply)
    if replies:
        st = bs.parse_status(replies[-1])
        kind = bs.MEDIA_TYPES.get(st.media_type, "unknown media")
        length = f"x{st.media_length_mm}" if st.media_length_mm else ""
        media = f"{st.media_width_mm}{length} mm {kind}" if st.media_type else "no media"
        return {"language": "brother_ql", "model": _brother_model(replies[-1][4]), "media": media}
    reply = await ask(zs.HOST_STATUS, zs.host_status_complete, timeout)
    if not zs.host_status_complete(reply):
        what = await identify_tspl(ask, timeout) if tspl else None
        if what is None and dymo:
            what = await identify_dymo(ask, timeout, None)
        return what
    hs = zs.parse_host_status(reply)
    found = {"language": "zpl", "model": "Zebra (ZPL)", "media": f"label length {hs.label_length} dots"}
    info = await ask(_ZPL_INFO, lambda b: b"\x03" in b, timeout)
    if b"\x02" in info and b"\x03" in info:
        # ~HI: STX model,firmware,dots/mm,memory ETX
        fields = info[info.index(b"\x02") + 1 : info.index(b"\x03")].decode("ascii", "replace").split(",")
        found["model"] = fields[0].strip() or found["model"]
        if len(fields) > 1:
            found["firmware"] = fields[1].strip()
    serial = await ask(zs.SERIAL_NUMBER, zs.sgd_complete, timeout)
    with contextlib.suppress(ValueError):  # printers before Link-OS have no SGD: no serial number to show
        found["serial_number"] = zs.parse_sgd(serial)
    return found


async def identify_stream(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float, named: bool = False
) -> Any:
    """identify() over a network connection; ``named``: a host the user named, also asked TSPL and DYMO."""

    async def ask(question: bytes, complete: Callable[[bytes], bool], wait: float) -> bytes:
        writer.write(question)
        await writer.drain()
        buf = b""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not complete(buf) and (left := deadline - loop.time()) > 0:
            try:
                chunk = await asyncio.wait_for(reader.read(4096), left)
            except TimeoutError:
                break
            if not chunk:
                break
            buf += chunk
        return buf

    return await identify(ask, timeout, tspl=named, dymo=named)


async def identify_transport(link: Transport, timeout: float, tspl: bool = False) -> dict[str, str] | None:
    """identify() over an opened driver transport (USB bulk endpoints, a serial line); None on silence or a
    broken link."""
    try:
        return await identify(link.ask, timeout, tspl)
    except DriverError:
        return None
