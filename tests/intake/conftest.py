"""An intake app on a real redis-server, served over real HTTP by aiohttp's test server, with a token per role."""

from __future__ import annotations
