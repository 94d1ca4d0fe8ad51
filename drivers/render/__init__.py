"""The badge image and the printer-language image codecs (ZPL ^GF, Brother QL raster, ESC/POS GS v 0).

The agent draws every badge itself (docs/printers.md): printers' resident fonts cannot draw most of the world's
names, and a Zebra prints a missing glyph as a blank.
"""

from __future__ import annotations

from drivers.render.badge import label_dots, render_badge

__all__ = ["label_dots", "render_badge"]
