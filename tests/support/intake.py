"""An intake app on a real redis-server, served over real HTTP by aiohttp's test server, with a token per role."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from intake.app import make_app
from intake.config import load_intake_config
from intake.tokens import ROLES, TokenFile
from protocol.connection import make_redis


def write_intake_config(tmp_path: Path, venue: str, url: str, limits: str = "", port: int = 8080) -> Path:
    path = tmp_path / "intake.yaml"
    path.write_text(
        f"venue: {venue}\nredis:\n  url: {url}\nlisten: 127.0.0.1:{port}\ntokens: tokens.json\n{limits}",
        encoding="utf-8",
    )
    return path


class Desk:
    """A test client plus a token per role (``auth("staff")`` is the header)."""

    def __init__(self, client: TestClient[Any, Any], secrets: dict[str, str], tokens: TokenFile) -> None:
        self.client, self.secrets, self.tokens = client, secrets, tokens

    def auth(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secrets[role]}"}


async def start_desk(tmp_path: Path, venue: str, url: str, limits: str = "") -> tuple[Desk, Any]:
    config = load_intake_config(write_intake_config(tmp_path, venue, url, limits))
    tokens = TokenFile(config.tokens)
    secrets = {role: tokens.add(f"{role}-1", role) for role in ROLES}
    secrets["kiosk-2"] = tokens.add("kiosk-2", "kiosk")
    redis = make_redis(config.redis, block_timeout=20.0)
    client = TestClient(TestServer(make_app(config, redis)))
    await client.start_server()
    return Desk(client, secrets, tokens), redis
