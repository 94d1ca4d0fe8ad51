"""Driver settings as they appear under ``printer.driver`` in an agent's YAML.

One flat model, because a venue engineer writes one flat block; the validator checks that the fields the chosen
transport needs are there and that no field of another transport is set by mistake.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from drivers.label import DEFAULT_LABELS, LabelConfig

Language = Literal["zpl", "escpos", "brother_ql", "dymo", "tspl", "ipp", "sim"]
TransportName = Literal["tcp", "usb", "serial", "sim"]

_TRANSPORT_FIELDS: dict[str, tuple[str, ...]] = {
    "tcp": ("host", "port"),
    "usb": ("vendor_id", "product_id", "serial_number", "usb_interface"),
    "serial": ("device", "baudrate", "parity", "stopbits", "flow_control"),
    "sim": ("print_time", "control_file", "print_log"),
}


def _usb_id(value: object) -> object:
    """Accept USB ids as YAML ints or as the hex strings ``lsusb`` prints ("0a5f", "0x0a5f")."""
    if isinstance(value, str):
        text = value.strip().lower().removeprefix("0x")
        try:
            return int(text, 16)
        except ValueError:
            raise ValueError(f"not a USB id: {value!r} (write it as lsusb shows it, e.g. 0a5f)") from None
    return value


# ``before`` and ``check`` in Meta.extra are run by core.validate when a config file is read (see there).
UsbId = Annotated[Annotated[int, Meta(ge=0, le=0xFFFF)] | None, Meta(extra={"before": _usb_id})]


class DriverConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    language: Language
    #: How the bytes reach the printer; an ``ipp`` printer is reached at its ``uri`` instead.
    transport: TransportName | None = None

    #: Brother QL model as detect reports it (e.g. QL-700, QL-1100): its head width and whether it takes
    #: compressed raster come from brother_ql's tables; left out, a QL-820NWB. DYMO: the LabelWriter model
    #: (e.g. LabelWriter 450, LabelWriter 5XL): its head width and protocol (4xx or 550); left out, the USB product
    #: id names it, or the printer's status reply tells the protocol.
    model: str | None = None
    # tcp
    host: str | None = None
    port: Annotated[int, Meta(ge=1, le=65535)] = 9100
    # usb
    vendor_id: UsbId = None
    product_id: UsbId = None
    serial_number: str | None = None
    usb_interface: Annotated[int, Meta(ge=0, le=31)] = 0
    # serial
    device: str | None = None
    baudrate: Annotated[int, Meta(ge=300, le=4_000_000)] = 9600
    parity: Literal["none", "even", "odd"] = "none"
    stopbits: Literal[1, 2] = 1
    flow_control: Literal["none", "rtscts", "xonxoff"] = "none"
    # ipp: an IPP Everywhere / AirPrint printer or a CUPS queue (ipp://cups-host:631/printers/NAME)
    uri: str | None = None
    #: ``ipps://`` only: the SHA-256 of the printer's certificate (as ``openssl x509 -noout -fingerprint -sha256``
    #: prints it); any other certificate is refused.
    tls_fingerprint: str | None = None
    # every link
    connect_timeout: Annotated[float, Meta(gt=0, le=60)] = 3.0
    io_timeout: Annotated[float, Meta(gt=0, le=60)] = 3.0
    print_timeout: Annotated[float, Meta(gt=0, le=600)] = 30.0
    #: The label stock; when left out, the usual stock of the language's printers (see DEFAULT_LABELS).
    label: LabelConfig = msgspec.field(default_factory=LabelConfig)
    template: Path | None = None
    # sim: an in-process printer for rehearsals and tests
    print_time: Annotated[float, Meta(ge=0, le=60)] = 0.5
    control_file: Path | None = None
    print_log: Path | None = None

    def __post_init__(self) -> None:
        if self.language == "ipp":
            self._check_ipp()
            return
        if self.uri is not None or self.tls_fingerprint is not None:
            raise ValueError("'uri' and 'tls_fingerprint' are for language 'ipp' printers")
        if self.transport is None:
            raise ValueError(f"language {self.language!r} needs 'transport' (tcp, usb, serial or sim)")
        if (self.language == "sim") != (self.transport == "sim"):
            raise ValueError("language 'sim' goes only with transport 'sim' (and the other way round)")
        if self.transport == "tcp" and not self.host:
            raise ValueError("transport 'tcp' needs 'host'")
        if self.transport == "serial" and not self.device:
            raise ValueError("transport 'serial' needs 'device' (e.g. /dev/ttyUSB0)")
        if self.transport == "usb" and (self.vendor_id is None or self.product_id is None):
            # Without ids the agent would take whichever USB printer answers first (or none, shown as 0000:0000).
            raise ValueError(
                "transport 'usb' needs 'vendor_id' and 'product_id' (as lsusb or `badge-agent detect` shows them)"
            )
        if self.model is not None and self.language not in ("brother_ql", "dymo"):
            raise ValueError(
                f"'model' is for brother_ql and dymo printers; a {self.language} printer says its own model"
            )
        if self.language == "dymo" and self.transport == "serial":
            raise ValueError("a DYMO LabelWriter is reached over 'usb' or 'tcp', not 'serial'")
        if self.language == "dymo" and self.model is not None:
            from drivers.languages.dymo_status import model_named

            model_named(self.model)

    def _check_ipp(self) -> None:
        from urllib.parse import urlsplit

        if self.transport is not None:
            raise ValueError("an ipp printer is reached at its 'uri'; leave out 'transport'")
        if self.model is not None:
            raise ValueError("'model' is for brother_ql printers; an ipp printer says its own model")
        if not self.uri:
            raise ValueError(
                "language 'ipp' needs 'uri' (ipp://HOST[:PORT]/PATH, or ipps://... with 'tls_fingerprint')"
            )
        parts = urlsplit(self.uri)
        if parts.scheme not in ("ipp", "ipps") or not parts.hostname:
            raise ValueError(
                f"uri {self.uri!r} is not an IPP printer URI: ipp://HOST[:PORT]/PATH (e.g. ipp://10.0.0.7/ipp/print, "
                "or a CUPS queue ipp://cups-host:631/printers/NAME)"
            )
        if parts.scheme == "ipps" and not self.tls_fingerprint:
            raise ValueError(
                "an ipps:// printer needs 'tls_fingerprint': its certificate's SHA-256 (see docs/configuration.md)"
            )
        if self.tls_fingerprint is not None:
            if parts.scheme != "ipps":
                raise ValueError("'tls_fingerprint' is for ipps:// printers (an ipp:// printer has no certificate)")
            from drivers.ipp.client import parse_fingerprint

            parse_fingerprint(self.tls_fingerprint)

    def _check_given(self, given: frozenset[str]) -> None:
        """Rules about what the YAML block says, not what the values are (core.validate calls this)."""
        # Only a label left out follows the language: an explicit 4x6 label on a Brother is the user's choice.
        if "label" not in given and self.language in DEFAULT_LABELS:
            self.label = msgspec.structs.replace(DEFAULT_LABELS[self.language])
        if self.language == "brother_ql":
            from drivers.languages import brother_media

            brother_media.check(self.model or brother_media.DEFAULT_MODEL, self.label)
        if self.language == "ipp":
            stray = sorted(n for names in _TRANSPORT_FIELDS.values() for n in names if n in given)
            if stray:
                raise ValueError(f"{', '.join(stray)}: an ipp printer is reached at its 'uri' only")
            return
        # Written, not "differs from the default": `port: 9100` under a serial printer is still a mistake.
        own = _TRANSPORT_FIELDS.get(self.transport or "", ())
        for transport, names in _TRANSPORT_FIELDS.items():
            if transport == self.transport:
                continue
            stray = [n for n in names if n in given and n not in own]
            if stray:
                raise ValueError(f"{', '.join(stray)} belong(s) to transport '{transport}', not '{self.transport}'")
