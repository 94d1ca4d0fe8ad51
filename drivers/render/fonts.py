"""Where the badge fonts come from, and which font can draw which character.

A stock printer font prints a missing glyph as a blank (docs/printers.md), so coverage is decided from each font's
``cmap`` table (:mod:`drivers.render.cmap`), never from Pillow's rendering, which silently draws ``.notdef`` boxes.

Fonts are looked up, in this order, in the directories named by ``$BADGE_AGENT_FONT_DIRS`` (``os.pathsep``
separated), the package's ``fontdata/`` (Noto Sans, Sans Arabic, Sans Hebrew: enough for most names on any box)
and the Debian/Fedora/Arch Noto directories (``fonts-noto-core``, ``fonts-noto-cjk``). CJK fonts are 20 MB
collections, so they are not bundled.
"""

from __future__ import annotations

import bisect
import functools
import logging
import os
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import ImageFont, features

from drivers.render.cmap import FontFileError, Range, best_cmap_ranges

log = logging.getLogger(__name__)

FONT_DIRS_ENV = "BADGE_AGENT_FONT_DIRS"
PACKAGE_FONT_DIR = Path(__file__).with_name("fontdata")
SYSTEM_FONT_DIRS: tuple[Path, ...] = (
    Path("/usr/share/fonts/truetype/noto"),  # Debian/Ubuntu fonts-noto-core
    Path("/usr/share/fonts/opentype/noto"),  # Debian/Ubuntu fonts-noto-cjk
    Path("/usr/share/fonts/noto"),  # Arch
    Path("/usr/share/fonts/noto-cjk"),  # Arch
    Path("/usr/share/fonts/google-noto"),  # Fedora
    Path("/usr/share/fonts/google-noto-sans-cjk-fonts"),  # Fedora
)

#: Whether Pillow can shape text (bidi, joining, Indic reordering). Read once; tests may patch it.
RAQM = bool(features.check("raqm"))
LAYOUT = ImageFont.Layout.RAQM if RAQM else ImageFont.Layout.BASIC

#: One Noto Sans CJK collection holds every region; the face index picks the regional glyph forms of Han.
CJK_REGIONS: tuple[tuple[str, int], ...] = (("JP", 0), ("KR", 1), ("SC", 2), ("TC", 3))


@dataclass(frozen=True)
class Face:
    """One face of one font file (collections hold several faces)."""

    path: Path
    index: int = 0

    @property
    def name(self) -> str:
        return self.path.name + (f"#{self.index}" if self.index else "")


@dataclass(frozen=True)
class Family:
    """A font family the badge may use, with the file names it goes by, most preferred first."""

    key: str
    regular: tuple[tuple[str, int], ...]
    bold: tuple[tuple[str, int], ...]


def _noto(script: str, serif: bool = False) -> Family:
    base = f"NotoSerif{script}" if serif else f"NotoSans{script}"
    return Family(script or "Latin", ((f"{base}-Regular.ttf", 0),), ((f"{base}-Bold.ttf", 0),))


def _cjk(region: str, index: int) -> Family:
    def files(weight: str) -> tuple[tuple[str, int], ...]:
        return (
            (f"NotoSansCJK-{weight}.ttc", index),
            (f"NotoSansCJK{region.lower()}-{weight}.otf", 0),
            (f"NotoSans{region}-{weight}.otf", 0),
        )

    return Family(f"CJK {region}", files("Regular"), files("Bold"))


#: Fallback order. Latin first so a Latin name inside Arabic or CJK text keeps Latin letterforms.
FAMILIES: tuple[Family, ...] = (
    _noto(""),
    _noto("Arabic"),
    _noto("Hebrew"),
    *(_cjk(region, index) for region, index in CJK_REGIONS),
    *(
        _noto(script)
        for script in [
            "Devanagari",
            "Bengali",
            "Gurmukhi",
            "Gujarati",
            "Oriya",
            "Tamil",
            "Telugu",
            "Kannada",
            "Malayalam",
            "Sinhala",
            "Thai",
            "Lao",
            "Khmer",
            "Myanmar",
            "Georgian",
            "Armenian",
            "Ethiopic",
            "Thaana",
            "Syriac",
            "Mongolian",
            "Cherokee",
            "CanadianAboriginal",
            "Javanese",
            "Balinese",
            "Sundanese",
            "Tifinagh",
            "Adlam",
            "NKo",
            "Yi",
            "Vai",
            "Bamum",
            "Cham",
            "TaiTham",
            "OlChiki",
            "Lisu",
            "Symbols",
            "Symbols2",
            "Math",
        ]
    ),
    _noto("Tibetan", serif=True),
)

#: Families the badge is expected to have; a deployment lacking one is reported by :func:`missing_families`.
EXPECTED = ("Latin", "Arabic", "Hebrew", "CJK JP", "CJK KR", "CJK SC", "CJK TC", "Devanagari", "Thai")


def font_dirs(extra: Iterable[Path] = ()) -> list[Path]:
    env = [Path(p) for p in os.environ.get(FONT_DIRS_ENV, "").split(os.pathsep) if p]
    return [*extra, *env, PACKAGE_FONT_DIR, *SYSTEM_FONT_DIRS]


class Coverage:
    """The code points one face maps to a glyph, as sorted ranges.

    A set of code points would do, but a CJK face maps ~45,000 of them (~4 MB of Python ints and hash table per
    face, and a Pi keeps every face it ever looked at); the same cmap is a few hundred ranges here.
    """

    __slots__ = ("_ends", "_starts")

    def __init__(self, ranges: Iterable[Range]) -> None:
        """``ranges``: sorted, non-overlapping inclusive (first, last) pairs, as :func:`best_cmap_ranges` gives."""
        self._starts = array("I")
        self._ends = array("I")
        for start, end in ranges:
            self._starts.append(start)
            self._ends.append(end)

    def __contains__(self, code: object) -> bool:
        if not isinstance(code, int):
            return False
        i = bisect.bisect_right(self._starts, code) - 1
        return i >= 0 and code <= self._ends[i]

    def __len__(self) -> int:
        return sum(end - start + 1 for start, end in zip(self._starts, self._ends, strict=True))


@functools.cache
def coverage(face: Face) -> Coverage:
    """The code points a face maps to a glyph. Cached for the life of the process (a CJK cmap takes ~10 ms)."""
    try:
        return Coverage(best_cmap_ranges(face.path, face.index))
    except (OSError, FontFileError) as exc:
        # A broken font file must not take the agent down: it simply covers nothing.
        log.warning("cannot read font %s: %s", face.name, exc)
        return Coverage(())


@functools.lru_cache(maxsize=6)
def truetype(face: Face, size: int) -> ImageFont.FreeTypeFont:
    """A Pillow font at a pixel size; cached because fitting one field measures a handful of runs at each size.

    Kept small on purpose: each entry is a FreeType face of its own with its own map of the font file, and the pages
    a face touches count again in every map of the same file (a CJK collection is 20 MB). Fitted sizes change
    with every name, so entries rarely outlive a badge: with 32 entries an agent rendering varied names held
    ~25 MB more than with 6, for ~0.5 ms a badge (of ~9) saved in re-opened faces.
    """
    return ImageFont.truetype(str(face.path), size, index=face.index, layout_engine=LAYOUT)


class FontLibrary:
    """The fonts found on this machine, in fallback order, per weight."""

    def __init__(self, dirs: Sequence[Path] | None = None, *, system_fallback: bool = True) -> None:
        """Find the fonts.

        Args:
            dirs: directories to search, first match wins (default: :func:`font_dirs`).
            system_fallback: also use any other Noto font in those directories, after the listed families, so
                a name in a rarer script still prints when its font happens to be installed.
        """
        self.dirs = [d for d in (font_dirs() if dirs is None else dirs) if d.is_dir()]
        self.found: dict[str, tuple[Face, Face]] = {}
        for family in FAMILIES:
            regular = self._find(family.regular)
            if regular is not None:
                self.found[family.key] = (regular, self._find(family.bold) or regular)
        if system_fallback:
            self._add_other_noto()

    def _find(self, candidates: tuple[tuple[str, int], ...]) -> Face | None:
        for directory in self.dirs:
            for filename, index in candidates:
                path = directory / filename
                if path.is_file():
                    return Face(path, index)
        return None

    def _add_other_noto(self) -> None:
        known = {face.path.name for pair in self.found.values() for face in pair}
        for directory in self.dirs:
            for path in sorted(directory.glob("Noto*-Regular.[ot]tf")):
                if path.name in known or "Mono" in path.name:
                    continue
                known.add(path.name)
                bold = path.with_name(path.name.replace("-Regular.", "-Bold."))
                regular_face = Face(path)
                self.found[path.stem] = (regular_face, Face(bold) if bold.is_file() else regular_face)

    def faces(self, bold: bool, cjk_first: str = "JP") -> list[Face]:
        """Every face in fallback order; ``cjk_first`` moves one CJK region to the front of the CJK group."""
        keys = list(self.found)
        first = f"CJK {cjk_first}"
        if first in keys:
            cjk_at = min(i for i, key in enumerate(keys) if key.startswith("CJK "))
            keys.remove(first)
            keys.insert(cjk_at, first)
        return [self.found[key][1 if bold else 0] for key in keys]

    def missing_families(self) -> list[str]:
        """Expected families not found: a deployment check can tell the operator which package to install."""
        return [key for key in EXPECTED if key not in self.found]


@functools.cache
def default_library() -> FontLibrary:
    library = FontLibrary()
    missing = library.missing_families()
    if missing:
        log.warning(
            "badge fonts missing: %s (install fonts-noto-core and fonts-noto-cjk, or set %s); names in those "
            "scripts will be refused, never printed with holes",
            ", ".join(missing),
            FONT_DIRS_ENV,
        )
    if not RAQM:
        log.warning("Pillow has no raqm layout engine: right-to-left and complex-script names will be refused")
    return library
