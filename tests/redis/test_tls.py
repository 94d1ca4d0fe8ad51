"""TLS: an agent connects with the venue CA and a client certificate; every misconfiguration fails clearly."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import free_port
from core.validate import Invalid
from protocol.redis_config import RedisConfig
from protocol.store import Store
from tests.support.agents import enqueue_many, printed_count, running_process, write_agent_config
from tests.support.prints import print_log_copies
from tests.support.processes import badge_agent
from tests.support.topology import Node, wait_port
from tests.support.waiting import wait_until

SUBJECT_ALT_NAMES = "subjectAltName=DNS:localhost"  # not 127.0.0.1: connecting by that IP must fail


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d: Path, name: str) -> None:
    """A venue CA, as docs/redis.md shows it."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)  # fmt: skip


def make_cert(d: Path, ca: str, name: str, ext: str) -> None:
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", cwd=d)  # fmt: skip
    (d / f"{name}.ext").write_text(ext + "\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-days", "30", "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)  # fmt: skip


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A redis-server whose TLS port wants a client certificate signed by the venue CA. Yields (dir, tls port)."""
    d = tmp_path_factory.mktemp("tls")
    make_ca(d, "venue-ca")
    make_ca(d, "other-ca")
    make_cert(d, "venue-ca", "redis", SUBJECT_ALT_NAMES)
    make_cert(d, "venue-ca", "agent", "extendedKeyUsage=clientAuth")
    for key in d.glob("*.key"):
        key.chmod(0o600)
    tls_port = free_port()
    node = Node(
        d / "server",
        [
            "--tls-port", str(tls_port), "--tls-cert-file", str(d / "redis.crt"),
            "--tls-key-file", str(d / "redis.key"), "--tls-ca-cert-file", str(d / "venue-ca.crt"),
            "--tls-auth-clients", "yes", "--appendonly", "yes", "--appendfsync", "always",
        ],
    )  # fmt: skip
    node.start()
    wait_port(tls_port, 10, node, tls=True)
    yield d, tls_port
    node.stop()


async def test_agent_connects_with_the_venue_ca_and_a_client_certificate(
    tmp_path: Path, tls_redis: tuple[Path, int], venue: str
) -> None:
    d, port = tls_redis
    url = f"rediss://localhost:{port}/0"
    tls = {"ca_file": str(d / "venue-ca.crt"), "cert_file": str(d / "agent.crt"), "key_file": str(d / "agent.key")}
    config = write_agent_config(tmp_path / "t1.yaml", venue, url, "t1", redis__tls=tls)
    admin = Redis(
        host="localhost", port=port, ssl=True, ssl_ca_certs=tls["ca_file"],
        ssl_certfile=tls["cert_file"], ssl_keyfile=tls["key_file"],
    )  # fmt: skip
    try:
        ids = await enqueue_many(Store(admin, venue), 5)
        with running_process(config) as proc:
            await wait_until(lambda: _eq(printed_count(admin, venue), 5), timeout=20)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(proc.wait, 20) == 0
        assert print_log_copies(tmp_path / "t1.prints.jsonl") == {i: 1 for i in ids}
        # The CLI with the same config, over TLS too.
        status = await asyncio.to_thread(badge_agent, "status", "-c", str(config))
        assert status.returncode == 0, status.stderr
    finally:
        await admin.aclose()


async def _eq(value: object, n: int) -> bool:
    return await value == n  # type: ignore[misc]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("wrong-ca", "not signed by redis.tls.ca_file"),
        ("no-client-cert", "wants a client certificate"),
        ("plain-to-tls-port", "use rediss://"),
        ("hostname-not-in-certificate", "does not name the host"),
    ],
)
def test_misconfigured_tls_fails_with_a_clear_message(
    tmp_path: Path, tls_redis: tuple[Path, int], venue: str, case: str, expected: str
) -> None:
    d, port = tls_redis
    url = f"rediss://localhost:{port}/0"
    tls: dict[str, str] | None = {
        "ca_file": str(d / "venue-ca.crt"), "cert_file": str(d / "agent.crt"), "key_file": str(d / "agent.key")
    }  # fmt: skip
    assert tls is not None
    if case == "wrong-ca":
        tls["ca_file"] = str(d / "other-ca.crt")
    elif case == "no-client-cert":
        del tls["cert_file"], tls["key_file"]
    elif case == "plain-to-tls-port":
        url, tls = f"redis://127.0.0.1:{port}/0", None
    else:
        # The server's certificate names localhost only.
        url = f"rediss://127.0.0.1:{port}/0"
    overrides = {"redis__tls": tls} if tls else {}
    config = write_agent_config(tmp_path / "bad.yaml", venue, url, "bad", **overrides)
    result = badge_agent("status", "-c", str(config), timeout=30)
    assert result.returncode == 69, result.stdout + result.stderr
    assert expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_tls_settings_never_silently_fall_back_to_plain_text(tmp_path: Path) -> None:
    with pytest.raises(Invalid, match="not rediss://"):
        RedisConfig.parse({"url": "redis://127.0.0.1:6379/0", "tls": {}})
    with pytest.raises(Invalid, match="together"):
        RedisConfig.parse({"url": "rediss://h:1/0", "tls": {"cert_file": __file__}})
    with pytest.raises(Invalid, match=r"^tls\.verify: unknown field"):
        RedisConfig.parse({"url": "rediss://h:1/0", "tls": {"verify": False}})


def test_a_reset_after_the_handshake_without_a_client_certificate_is_explained() -> None:
    # Under TLS 1.3 a server that wants a client certificate checks it after the client's handshake ended; its alert
    # can lose the race with the client's first command, which then reads a reset (seen in CI).
    from redis.exceptions import ConnectionError as RedisConnectionError

    from protocol.connection import explain

    reset = RedisConnectionError("Error while reading from localhost:6380 : (104, 'Connection reset by peer')")
    assert "wants a client certificate" in explain(reset, tls=True, client_cert=False)
    assert "wants a client certificate" not in explain(reset, tls=True, client_cert=True)
    assert "use rediss://" in explain(reset, tls=False, client_cert=False)
