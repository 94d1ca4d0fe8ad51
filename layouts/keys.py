"""The badge layouts' keys, under the venue's hash tag beside the protocol's (protocol/keys.py).

``P layouts`` (hash) each layout name's version, stocks and when and by whom it was set; ``P layout:<name>:<stock>``
(hash) one variant's version and document; ``P layouts:rules`` (hash) which field value picks which layout;
``P layouts:version`` (string) a number every change bumps, which agents poll; ``P layouts:changed`` the pub/sub
channel a change is announced on.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.keys import Keys


@dataclass(frozen=True)
class LayoutKeys:
    venue: str

    @property
    def prefix(self) -> str:
        return Keys(self.venue).prefix

    @property
    def events(self) -> str:
        """The venue's event stream (protocol/keys.py), where every change of the layouts is told."""
        return Keys(self.venue).events

    @property
    def layouts(self) -> str:
        """Badge layouts by name: a JSON of each one's version, stocks and sources (layouts/store.py)."""
        return self.prefix + "layouts"

    @property
    def layouts_version(self) -> str:
        """A number that grows with every change of the venue's layouts or rules: what agents poll."""
        return self.prefix + "layouts:version"

    @property
    def layouts_changed(self) -> str:
        """The pub/sub channel a change of layouts is announced on, so agents need not wait for their poll."""
        return self.prefix + "layouts:changed"

    @property
    def layout_rules(self) -> str:
        """Which field value picks which layout: ``ticket_type=Speaker`` -> ``speaker``."""
        return self.prefix + "layouts:rules"

    def layout(self, name: str, stock: str) -> str:
        """One variant of a layout, for one stock ("101.6x152.4"): its version, document and files."""
        return self.prefix + "layout:" + name + ":" + stock
