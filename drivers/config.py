"""Driver settings as they appear under ``printer.driver`` in an agent's YAML.

One flat model, because a venue engineer writes one flat block; the validator checks that the fields the chosen
transport needs are there and that no field of another transport is set by mistake.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

Language = Literal["zpl", "escpos", "brother_ql", "sim"]
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


UsbId = Annotated[int, BeforeValidator(_usb_id), Field(ge=0, le=0xFFFF)]


class LabelConfig(BaseModel):
    """The label stock loaded in the printer."""

    model_config = ConfigDict(extra="forbid")

    width_mm: float = Field(default=101.6, gt=10, le=300)
    height_mm: float = Field(default=152.4, gt=10, le=600)
    dpi: int = Field(default=203, ge=100, le=600)


#: A 4x6 in Zebra label at 203 dpi; 62 mm Brother DK tape cut at 100 mm (QL printers are 300 dpi); 80 mm ESC/POS
#: paper, whose printable width is 72 mm at 203 dpi.
DEFAULT_LABELS: dict[str, LabelConfig] = {
    "zpl": LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203),
    "brother_ql": LabelConfig(width_mm=62, height_mm=100, dpi=300),
    "escpos": LabelConfig(width_mm=72, height_mm=100, dpi=203),
}


class DriverConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    language: Language
    transport: TransportName

    # tcp
    host: str | None = None
    port: int = Field(default=9100, ge=1, le=65535)
    # usb
    vendor_id: UsbId | None = None
    product_id: UsbId | None = None
    serial_number: str | None = None
    usb_interface: int = Field(default=0, ge=0, le=31)
    # serial
    device: str | None = None
    baudrate: int = Field(default=9600, ge=300, le=4_000_000)
    parity: Literal["none", "even", "odd"] = "none"
    stopbits: Literal[1, 2] = 1
    flow_control: Literal["none", "rtscts", "xonxoff"] = "none"
    # every link
    connect_timeout: float = Field(default=3.0, gt=0, le=60)
    io_timeout: float = Field(default=3.0, gt=0, le=60)
    print_timeout: float = Field(default=30.0, gt=0, le=600)
    #: The label stock; when left out, the usual stock of the language's printers (see DEFAULT_LABELS).
    label: LabelConfig = Field(default_factory=LabelConfig)
    template: Path | None = None
    # sim: an in-process printer for rehearsals and tests
    print_time: float = Field(default=0.5, ge=0, le=60)
    control_file: Path | None = None
    print_log: Path | None = None

    @model_validator(mode="after")
    def _label_for_language(self) -> DriverConfig:
        if "label" not in self.model_fields_set and self.language in DEFAULT_LABELS:
            self.label = DEFAULT_LABELS[self.language].model_copy()
        return self

    @model_validator(mode="after")
    def _fields_fit_transport(self) -> DriverConfig:
        if (self.language == "sim") != (self.transport == "sim"):
            raise ValueError("language 'sim' goes only with transport 'sim' (and the other way round)")
        if self.transport == "tcp" and not self.host:
            raise ValueError("transport 'tcp' needs 'host'")
        if self.transport == "serial" and not self.device:
            raise ValueError("transport 'serial' needs 'device' (e.g. /dev/ttyUSB0)")
        if self.transport == "usb" and (self.vendor_id is None) != (self.product_id is None):
            raise ValueError("transport 'usb' needs both 'vendor_id' and 'product_id', or neither (any USB printer)")
        set_fields = self.model_fields_set
        for transport, names in _TRANSPORT_FIELDS.items():
            if transport == self.transport:
                continue
            stray = [n for n in names if n in set_fields and n not in _TRANSPORT_FIELDS[self.transport]]
            if stray:
                raise ValueError(f"{', '.join(stray)} belong(s) to transport '{transport}', not '{self.transport}'")
        return self
