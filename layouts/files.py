"""Reading a layout from disk: the YAML or JSON file and the images and background it names, all checked."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from layouts import assets
from layouts.errors import LayoutError
from layouts.model import Layout, describe, parse_layout

#: A layout file is a page of text; anything larger is not one.
MAX_LAYOUT_BYTES = 256 * 1024


def read_document(path: Path) -> Any:
    """The parsed YAML or JSON (JSON is YAML, but its errors read better from json). Raises LayoutError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LayoutError([f"{path}: cannot be read: {exc.strerror or exc}"]) from None
    if len(raw) > MAX_LAYOUT_BYTES:
        raise LayoutError([f"{path}: is {len(raw)} bytes; a layout file is at most {MAX_LAYOUT_BYTES}"])
    try:
        text = raw.decode("utf-8")
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise LayoutError(
            [f"{path}: is not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}"]
        ) from None


def read_assets(data: object, folder: Path, source: str, extra: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """The files the layout names (``src`` of images, ``background``), read from ``folder`` and checked.

    ``extra`` holds files already in hand (a stored layout's own). Raises LayoutError naming the element.
    """
    found: dict[str, bytes] = {}
    problems: list[str] = []
    if not isinstance(data, Mapping):
        return found
    wanted: list[tuple[str, str, bool]] = []  # (name, where, is background)
    if isinstance(data.get("background"), str):
        wanted.append((data["background"], f"{source}: background", True))
    for index, raw in enumerate(data.get("elements") or []):
        if isinstance(raw, Mapping) and raw.get("type") == "image" and isinstance(raw.get("src"), str):
            wanted.append((raw["src"], f"{source}: {describe(index, raw)}", False))
    for name, where, background in wanted:
        if name in found:
            continue
        content = (extra or {}).get(name)
        if content is None:
            problem, content = _read(folder, name)
            if problem or content is None:
                problems.append(f"{where}: {problem}")
                continue
        problem = assets.check_image(name, content, background=background)
        if problem:
            problems.append(f"{where}: {problem}")
            continue
        found[name] = content
    if problems:
        raise LayoutError(problems)
    return found


def _read(folder: Path, name: str) -> tuple[str | None, bytes | None]:
    path = Path(name)
    if path.is_absolute() or ".." in path.parts:
        return f"{name!r}: name a file beside the layout (no absolute paths or ..)", None
    full = folder / path
    try:
        size = full.stat().st_size
        limit = max(assets.MAX_IMAGE_BYTES, assets.MAX_BACKGROUND_BYTES)
        if size > limit:  # checked before reading: a 50 MB file is not read into memory to be refused
            return f"{name} is {size / 1e6:.1f} MB; at most {limit // (1024 * 1024)} MB", None
        return None, full.read_bytes()
    except OSError as exc:
        return f"{name}: cannot be read ({exc.strerror or exc})", None


def load_layout(path: Path) -> Layout:
    """Read and check a layout file and its images. Raises LayoutError listing every problem."""
    data = read_document(path)
    problems: list[str] = []
    found: dict[str, bytes] = {}
    try:
        found = read_assets(data, path.parent, str(path))
    except LayoutError as exc:
        problems.extend(exc.problems)
    try:
        layout = parse_layout(data, str(path), found)
    except LayoutError as exc:
        raise LayoutError(exc.problems + problems) from None
    if problems:
        raise LayoutError(problems)
    return _drawn(layout)


def _drawn(layout: Layout) -> Layout:
    """The layout with its SVGs and PDF drawn for every printer resolution (layouts/draw.py ``prerender``): a file
    that cannot be drawn within the bounds is refused now, naming the element, not when it is stored."""
    from layouts.draw import prerender  # Pillow and the fonts: loaded only where layouts are drawn

    return prerender(layout)
