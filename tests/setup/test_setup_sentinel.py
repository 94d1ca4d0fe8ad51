"""setup with Redis Sentinel: flags (and prompts) write the redis.sentinel section (protocol/redis_config.py); setup and
check-config --connect reach the master through a real redis-sentinel, and each way it can be wrong is named."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from agent.config import load_config
from cli.main import main
from cli.redis_server import free_port
from drivers.emulators.brother import BrotherPrinter
from tests.support.topology import Node

#: A real redis-sentinel: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.sentinel


class OneSentinel:
    """A redis-server and one redis-sentinel (quorum 1) that monitors it as ``master`` and wants a password."""

    def __init__(self, root: Path) -> None:
        self.master = "venue-main"
        self.password_file = root / "sentinel.password"
        self.password_file.write_text("s3ntinel-pw\n", encoding="utf-8")
        self.server = Node(root / "redis", ["--save", "", "--appendonly", "no"])
        self.sentinel = Node(
            root / "sentinel",
            [f"sentinel monitor {self.master} 127.0.0.1 {self.server.port} 1", "requirepass s3ntinel-pw"],
            sentinel=True,
        )

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sentinel.port}"


@pytest.fixture
def sentinel(tmp_path: Path) -> Iterator[OneSentinel]:
    setup = OneSentinel(tmp_path)
    setup.server.start()
    setup.sentinel.start()
    yield setup
    setup.sentinel.stop()
    setup.server.stop()


async def _cli(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def test_setup_with_sentinel_flags_writes_checks_and_test_prints(
    tmp_path: Path, sentinel: OneSentinel, venue: str, brother: tuple[BrotherPrinter, str]
) -> None:
    printer, address = brother
    out = tmp_path / "hall-d-1.yaml"
    args = ["setup", "--yes", "--venue", venue, "--name", "hall-d-1", "--location", "Hall D", "--out", str(out)]
    args += ["--language", "brother_ql", "--host", address]
    sentinel_args = ["--sentinel", sentinel.address, "--sentinel-master", sentinel.master]
    sentinel_args += ["--sentinel-password-file", str(sentinel.password_file)]
    code, text = await _cli(*args, *sentinel_args)
    assert code == 0, text
    assert "redis and printer answer" in text and "test badge: printed" in text
    written = yaml.safe_load(out.read_text())["redis"]
    assert written == {
        "sentinel": {
            "master": sentinel.master,
            "nodes": [sentinel.address],
            "password_file": str(sentinel.password_file),
        }
    }
    assert load_config(out).redis.mode == "sentinel" and len(printer.printed()) == 1

    code, text = await _cli("check-config", "--connect", str(out))
    assert code == 0 and "redis and printer answer" in text, text

    def variant(name: str, **redis: object) -> Path:
        config = yaml.safe_load(out.read_text())
        config["redis"]["sentinel"].update(redis)
        config["redis"]["sentinel"] = {k: v for k, v in config["redis"]["sentinel"].items() if v is not None}
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path

    code, text = await _cli("check-config", "--connect", str(variant("master", master="no-such-master")))
    assert code == 69 and "monitor no master named 'no-such-master'" in text, text
    code, text = await _cli("check-config", "--connect", str(variant("nopass", password_file=None)))
    assert code == 69 and "want a password: set redis.sentinel.password_file" in text, text
    wrong = tmp_path / "wrong.password"
    wrong.write_text("nope\n", encoding="utf-8")
    code, text = await _cli("check-config", "--connect", str(variant("wrongpass", password_file=str(wrong))))
    assert code == 69 and "refused the login: wrong redis.sentinel.password_file" in text, text
    nobody = [f"127.0.0.1:{free_port()}"]
    code, text = await _cli("check-config", "--connect", str(variant("port", nodes=nobody)))
    assert code == 69 and f"no sentinel answers at {nobody[0]} (redis.sentinel.nodes)" in text, text
    assert "Traceback" not in text

    code, text = await _cli(*args, "--force", "--sentinel", sentinel.address)
    assert code == 2 and "--sentinel needs --sentinel-master NAME" in text, text
    code, text = await _cli(*args, "--force", *sentinel_args, "--redis", "redis://127.0.0.1:6379/0")
    assert code == 2 and "give --redis URL or --sentinel HOST:PORT, not both" in text, text


async def test_setup_prompts_for_sentinel_when_the_answer_is_addresses(
    tmp_path: Path, sentinel: OneSentinel, venue: str, brother: tuple[BrotherPrinter, str]
) -> None:
    printer, address = brother
    out = tmp_path / "hall-d-2.yaml"
    # The last answer: no Redis user name (the data servers of this test take any client).
    answers = [venue, "hall-d-2", "Hall D", sentinel.address, sentinel.master, str(sentinel.password_file), ""]
    args = ["setup", "--language", "brother_ql", "--host", address, "--out", str(out)]
    result: Result = await asyncio.to_thread(CliRunner().invoke, main, args, input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "Sentinel addresses" in result.output and "Sentinel master name" in result.output
    config = load_config(out)
    assert config.redis.sentinel is not None
    assert (config.redis.sentinel.master, config.redis.sentinel.nodes) == (sentinel.master, [sentinel.address])
    assert config.redis.sentinel.password_file == sentinel.password_file
    assert "test badge: printed" in result.output and len(printer.printed()) == 1
