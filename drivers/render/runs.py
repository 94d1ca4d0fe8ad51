"""Turning a field's text into font runs in visual order.

Pillow shapes one string with one font, so mixed-script text ("María 李", "Sara سارة") is cut into runs, each
drawn with a font that covers it and shaped by raqm on its own. The order of the runs on the line follows the
Unicode bidi algorithm at run granularity: within a run raqm does the full algorithm; between runs we apply the
neutral rules (N1/N2) and the reordering rule (L2), which is what names need. Explicit bidi controls are dropped
on the way in (they could only make our run-level order disagree with raqm's).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from drivers.base import RenderError
from drivers.render import fonts
from drivers.render.fonts import Face, FontLibrary

#: Explicit bidi embeddings, overrides, isolates and marks.
_BIDI_CONTROLS = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
#: Joiners and selectors: invisible, but they must stay inside the run of the character they modify.
_JOINERS = frozenset([0x200C, 0x200D, 0x034F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
_INVISIBLE = frozenset([0x00AD, 0x200B, 0x2060, 0xFEFF])
_WHITESPACE_CATEGORIES = ("Zs", "Zl", "Zp")

#: Scripts that are wrong without shaping or bidi (used only when raqm is missing).
_COMPLEX_RANGES = ((0x0590, 0x08FF), (0x0900, 0x0DFF), (0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x18AF))

ELLIPSIS = "\u2026"


def clean(text: str) -> str:
    """NFC text with controls removed and every run of white space made one space.

    Control characters (``\\x1b``, ``\\x00``, ``^`` is not one) never reach the image, and since the image is all
    that reaches the printer, no field can inject printer commands.
    """
    out: list[str] = []
    for char in unicodedata.normalize("NFC", text):
        code = ord(char)
        category = unicodedata.category(char)
        if category in _WHITESPACE_CATEGORIES or char in "\t\n\r\v\f\x1c\x1d\x1e\x1f\x85":
            if out and out[-1] != " ":
                out.append(" ")
        elif category == "Cc" or code in _BIDI_CONTROLS or code in _INVISIBLE:
            continue
        else:
            out.append(char)
    return "".join(out).strip()


def clusters(text: str) -> list[str]:
    """Split into clusters that must share one font: a base, its marks, and what a joiner ties to it."""
    result: list[str] = []
    for char in text:
        attach = bool(result) and (
            unicodedata.category(char).startswith("M")
            or ord(char) in _JOINERS
            or ord(result[-1][-1]) == 0x200D  # ZWJ sequences (emoji, Indic half forms) stay whole
        )
        if attach:
            result[-1] += char
        else:
            result.append(char)
    return result


def _direction(cluster: str) -> str:
    """ "R", "L" or "N" (neutral/weak: spaces, punctuation, digits) from the cluster's base character."""
    bidi = unicodedata.bidirectional(cluster[0])
    if bidi in ("R", "AL"):
        return "R"
    return "L" if bidi == "L" else "N"


def _code_points(chars: str) -> str:
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in chars)


@dataclass(frozen=True)
class Run:
    text: str
    face: Face
    rtl: bool


@dataclass(frozen=True)
class Paragraph:
    """A field's text, itemized: clusters with the face and direction of each, and the base direction."""

    clusters: tuple[str, ...]
    faces: tuple[Face, ...]
    dirs: tuple[str, ...]
    rtl: bool

    def line(self, start: int, end: int) -> list[Run]:
        """The runs of clusters[start:end] in visual (left to right) order."""
        runs: list[tuple[Face, str, list[str]]] = []
        for i in range(start, end):
            face, direction = self.faces[i], self.dirs[i]
            if runs and runs[-1][0] == face and runs[-1][1] == direction:
                runs[-1][2].append(self.clusters[i])
            else:
                runs.append((face, direction, [self.clusters[i]]))
        base = 1 if self.rtl else 0
        levels = [
            (1 if direction == "R" else 0) if base == 0 else (1 if direction == "R" else 2) for _, direction, _ in runs
        ]
        order = list(range(len(runs)))
        # UBA rule L2: from the highest level down to the lowest odd one, reverse every maximal stretch at or above it.
        for level in range(max(levels, default=0), 0, -1):
            i = 0
            while i < len(order):
                if levels[order[i]] >= level:
                    j = i
                    while j < len(order) and levels[order[j]] >= level:
                        j += 1
                    order[i:j] = reversed(order[i:j])
                    i = j
                else:
                    i += 1
        return [Run("".join(runs[k][2]), runs[k][0], runs[k][1] == "R") for k in order]


def _cjk_region(text: str) -> str:
    """Which regional Han glyphs suit this text: kana means Japanese, hangul Korean, else Simplified Chinese."""
    for char in text:
        code = ord(char)
        if 0x3040 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF:
            return "JP"
        if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
            return "KR"
    return "SC"


def needs_shaping(text: str) -> bool:
    for char in text:
        code = ord(char)
        if unicodedata.bidirectional(char) in ("R", "AL", "AN") or unicodedata.category(char) in ("Mn", "Mc"):
            return True
        if any(low <= code <= high for low, high in _COMPLEX_RANGES):
            return True
    return False


def itemize(field: str, text: str, library: FontLibrary, bold: bool) -> Paragraph:
    """Choose a face for every cluster of ``text``.

    Raises:
        RenderError: naming ``field`` and the code points no font draws, or the script raqm is needed for.
    """
    parts = clusters(text)
    faces_in_order = library.faces(bold, _cjk_region(text))
    dirs = [_direction(c) for c in parts]

    def draws(face: Face, cluster: str) -> bool:
        return all(ord(c) in fonts.coverage(face) for c in cluster if ord(c) not in _JOINERS)

    def first_face(cluster: str) -> Face | None:
        # Faces are read (their cmap) in fallback order and only until one draws the cluster: a Latin name never
        # reads the CJK collections' cmaps, and a Pi does not hold ~270 fonts' coverage after its first badge.
        return next((f for f in faces_in_order if draws(f, cluster)), None)

    firsts = [first_face(c) for c in parts]
    missing = [c for c, face in zip(parts, firsts, strict=True) if face is None]
    if missing:
        singles = "".join(dict.fromkeys(ch for c in missing for ch in c if first_face(ch) is None))
        if singles:
            detail = f"no installed font has {_code_points(singles)}"
        else:
            detail = f"no installed font draws the combination {_code_points(missing[0])}"
        raise RenderError(f"{field} {text!r} cannot be printed: {detail}")
    if not fonts.RAQM and needs_shaping(text):
        raise RenderError(
            f"{field} {text!r} needs right-to-left or complex-script shaping, and this Pillow has no raqm "
            "(install libraqm0 / libfribidi0 and reinstall Pillow)"
        )

    # Strong clusters take their first covering face; neutrals (spaces, digits, punctuation) join a neighbour's
    # face when it covers them, so a name stays one shaping run instead of breaking at every space.
    chosen: list[Face | None] = [face if dirs[i] != "N" else None for i, face in enumerate(firsts)]
    for i, face in enumerate(chosen):
        if face is not None:
            continue
        before = next((chosen[j] for j in range(i - 1, -1, -1) if chosen[j] is not None), None)
        after = next((chosen[j] for j in range(i + 1, len(chosen)) if chosen[j] is not None), None)
        chosen[i] = next((f for f in (before, after) if f is not None and draws(f, parts[i])), firsts[i])

    strong = [d for d in dirs if d != "N"]
    rtl = bool(strong) and strong[0] == "R"
    # UBA rules N1/N2 at cluster level: a neutral between two strong runs of one direction takes it, else the base.
    resolved = list(dirs)
    for i, direction in enumerate(dirs):
        if direction != "N":
            continue
        before_dir = next((dirs[j] for j in range(i - 1, -1, -1) if dirs[j] != "N"), None)
        after_dir = next((dirs[j] for j in range(i + 1, len(dirs)) if dirs[j] != "N"), None)
        resolved[i] = before_dir if before_dir is not None and before_dir == after_dir else ("R" if rtl else "L")
    final_faces = tuple(f for f in chosen if f is not None)
    return Paragraph(tuple(parts), final_faces, tuple(resolved), rtl)


def ellipsis_paragraph(paragraph: Paragraph, keep: int, library: FontLibrary, bold: bool) -> Paragraph:
    """The first ``keep`` clusters followed by an ellipsis (in a face that has one)."""
    parts = list(paragraph.clusters[:keep])
    while parts and parts[-1] == " ":
        parts.pop()
    keep = len(parts)
    mark = ELLIPSIS
    face = next((f for f in library.faces(bold) if ord(ELLIPSIS) in fonts.coverage(f)), None)
    if face is None:
        mark, face = "...", library.faces(bold)[0]
    # The ellipsis is neutral: it ends the line in the paragraph's direction.
    return Paragraph(
        (*parts, mark),
        (*paragraph.faces[:keep], face),
        (*paragraph.dirs[:keep], "R" if paragraph.rtl else "L"),
        paragraph.rtl,
    )
