"""No attendee field can add printer commands; ZPL templates escape every field; names in any script survive."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.base import Badge, RenderError
from drivers.emulators import ZplPrinter
from drivers.label import LabelConfig
from drivers.languages import zpl_text
from drivers.languages.rendering import render_zpl

TEMPLATE = (
    "^XA^CI28\n^FO40,40^A0N,60,60^FB720,2,0,C^FH_^FD{name}^FS\n^FO40,200^A0N,30,30^FB720,1^FH_^FD{company}^FS\n"
    "^FO40,250^A0N,30,30^FB720,1^FH_^FD{role}^FS\n^FO300,400^BQN,2,8^FH_^FDQA,{attendee_id}^FS\n^XZ\n"
)
NASTY = ["^XZ^XA^FDhacked^FS^XZ", "~JA", "~HS", "Ann\x1b@\x1dV\x00", "_5E_7E", "O'Brien ^FS", "\x00\x10\x04\x01"]
fields = st.one_of(st.sampled_from(NASTY), st.text(max_size=40))


def _one_job(data: bytes) -> ZplPrinter:
    printer = ZplPrinter("t")
    printer.receive(data, lambda _: None)
    return printer


@settings(max_examples=150, deadline=None)
@given(name=fields, company=fields, role=fields, attendee=fields)
def test_template_fields_never_become_commands(name: str, company: str, role: str, attendee: str) -> None:
    badge = Badge("j1", attendee or "A1", name or "N", company, role)
    data = zpl_text.fill_template(TEMPLATE, {"name": name, "company": company, "role": role, "attendee_id": attendee})
    assert data.count(b"^XA") == 1 and data.count(b"^XZ") == 1 and b"~" not in data
    assert all(0x20 <= b < 0x7F or b == 0x0A for b in data)  # no control byte reaches the printer
    printer = _one_job(data)
    assert len(printer.buffer) == 1  # exactly one format: nothing ended it early or started another
    texts = printer.decode(printer.buffer[0])["texts"]
    assert texts == [zpl_text.clean(name), zpl_text.clean(company), zpl_text.clean(role)]
    assert printer.decode(printer.buffer[0])["attendee_id"] == zpl_text.clean(attendee)
    del badge


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(NASTY) | st.text(min_size=1, max_size=30))
def test_graphic_badge_carries_no_field_text(name: str) -> None:
    badge = Badge("j1", "ATT-1", name, "^XZ~JA", "\x1b@")
    try:
        data = render_zpl(badge, LabelConfig(), None)
    except RenderError:
        return  # a name no font can draw is a poison job: nothing is sent at all
    assert data.count(b"^XA") == 1 and data.count(b"^XZ") == 1 and b"~" not in data


def test_names_in_any_script_use_the_graphic_when_the_font_cannot_draw_them() -> None:
    for name in ["José Müller", "محمد عبد الله", "王小明", "Ωμέγα", "דוד"]:
        data = render_zpl(Badge("j", "A", name), LabelConfig(), TEMPLATE)
        graphic = b"^GF" in data
        assert graphic is (not zpl_text.font_covers(name)), name
    assert zpl_text.unescape_field(zpl_text.escape_field("王小明 ^~_").encode()) == "王小明 ^~_"


def test_template_checks(tmp_path: Path) -> None:
    assert zpl_text.check_template(TEMPLATE) == []
    bad = "^XA^FO1,1^FD{name}^FS^FO1,1^FH_^FD{nam}^FS^XZ"
    problems = " | ".join(zpl_text.check_template(bad))
    assert "^CI28" in problems and "^FH_" in problems and "^FB" in problems and "nam" in problems
    path = tmp_path / "badge.zpl"
    path.write_text(TEMPLATE, encoding="utf-8")
    assert zpl_text.load_template(path) == TEMPLATE
