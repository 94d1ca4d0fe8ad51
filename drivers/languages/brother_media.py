"""Which Brother QL label a config means, and whether its model takes it (names and limits from brother_ql).

Brother names its stock by size in mm: ``"62"`` is 62 mm endless tape, ``"62x100"`` a die-cut 62x100 mm label.
Kept free of Pillow so ``check-config`` can check a Brother section without loading the renderer.
"""

from __future__ import annotations

from brother_ql.labels import FormFactor, LabelsManager
from brother_ql.models import ModelsManager

from drivers.label import LabelConfig

DEFAULT_MODEL = "QL-820NWB"


def label_id(label: LabelConfig) -> str:
    """The brother_ql identifier of the configured stock."""
    width, height = round(label.width_mm), round(label.height_mm)
    return f"{width}x{height}" if label.die_cut else str(width)


def check(model: str, label: LabelConfig) -> str:
    """The label identifier, after checking that ``model`` exists and takes it.

    Raises:
        ValueError: an unknown model, no such Brother stock, or stock the model cannot take.
    """
    models = ModelsManager()
    if model not in models.iter_identifiers():
        raise ValueError(f"unknown Brother model {model!r}; known: {', '.join(models.iter_identifiers())}")
    wanted = label_id(label)
    labels = LabelsManager()
    if wanted not in labels.iter_identifiers():
        kind = FormFactor.DIE_CUT if label.die_cut else FormFactor.ENDLESS
        same = [lb.identifier for lb in labels.iter_elements() if lb.form_factor == kind]
        what = "die-cut" if label.die_cut else "endless"
        raise ValueError(f"Brother has no {wanted} mm {what} label; {what} stock: {', '.join(same)}")
    restricted = labels.get(wanted).restricted_to_models
    if restricted and model not in restricted:
        raise ValueError(f"{model} cannot print {wanted} mm labels (only {', '.join(restricted)})")
    return wanted


def describe_roll(width_mm: int, die_cut: bool, length_mm: int = 0) -> str:
    return f"{width_mm}x{length_mm} mm die-cut" if die_cut else f"{width_mm} mm endless"


def loaded_label(width_mm: int, media_type: int, length_mm: int, label: LabelConfig) -> LabelConfig | None:
    """The label the loaded roll (as the status reports it) gives: a die-cut roll its own size, endless tape the
    configured badge length; None when nothing is loaded or the size is not a Brother stock."""
    if media_type == 0x00 or width_mm <= 10:
        return None
    die_cut = media_type in (0x0B, 0x4B)
    if die_cut and length_mm <= 10:
        return None
    height = float(length_mm) if die_cut else label.height_mm
    return LabelConfig(width_mm=float(width_mm), height_mm=height, dpi=label.dpi, die_cut=die_cut)


def roll_mismatch(width_mm: int, media_type: int, length_mm: int, label: LabelConfig) -> str | None:
    """Why the loaded roll (as the status reports it) is not the configured stock, or None when it is.

    ``media_type`` 0 (nothing loaded) is the status's own "no media" and not judged here.
    """
    if media_type == 0x00:
        return None
    loaded_die_cut = media_type in (0x0B, 0x4B)
    want_width, want_length = round(label.width_mm), round(label.height_mm) if label.die_cut else 0
    if (width_mm, loaded_die_cut) == (want_width, label.die_cut) and (not label.die_cut or length_mm == want_length):
        return None
    loaded = describe_roll(width_mm, loaded_die_cut, length_mm)
    return f"loaded {loaded}, config expects {describe_roll(want_width, label.die_cut, want_length)}"
