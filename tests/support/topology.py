"""Real redis-server, Sentinel and Cluster processes on loopback for the deployment tests (tests/redis/) and
bench/sentinel.py (no Docker, no mocks)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import RedisError

from cli.redis_server import find_redis_server, free_port, kill_process, stop_process


class Node:
    """One redis-server (or a sentinel) process with its own directory and port."""

    def __init__(
        self,
        directory: Path,
        args: list[str],
        port: int | None = None,
        sentinel: bool = False,
        executable: str | None = None,
    ) -> None:
        self.executable = executable
        self.directory = directory
        self.port = port or free_port()
        self.args = args
        self.sentinel = sentinel
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0, ping: bool = True) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        base = [self.executable or find_redis_server()]
        if self.sentinel:
            conf = self.directory / "sentinel.conf"
            if not conf.exists():
                conf.write_text("\n".join(self.args) + "\n")
            base += [str(conf), "--sentinel"]
            extra = ["--port", str(self.port)]
        else:
            extra = [*self.args, "--port", str(self.port)]
        extra += ["--bind", "127.0.0.1", "--dir", str(self.directory), "--logfile", str(self.directory / "log")]
        self.proc = subprocess.Popen(base + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if ping:
            wait_port(self.port, timeout, self)

    def kill(self) -> None:
        kill_process(self.proc)

    def stop(self) -> None:
        stop_process(self.proc)

    def log(self) -> str:
        try:
            return (self.directory / "log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""


def wait_port(port: int, timeout: float, node: Node | None = None, tls: bool = False) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if node is not None and node.proc is not None and node.proc.poll() is not None:
            raise RuntimeError(f"redis process exited at start: {node.log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                if tls:
                    return
                conn.sendall(b"PING\r\n")
                reply = conn.recv(64)
                if reply.startswith((b"+PONG", b"-NOAUTH", b"-LOADING")):
                    return
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"redis on port {port} did not start within {timeout:g} s")


DATA_ARGS = ["--appendonly", "yes", "--appendfsync", "always", "--save", "", "--repl-diskless-sync-delay", "0"]


class SentinelSetup:
    """1 master, 2 replicas, 3 sentinels watching the master as ``venue``; every server with AOF fsync always."""

    def __init__(self, root: Path, master_name: str = "venue") -> None:
        self.name = master_name
        self.servers = [Node(root / f"redis-{i}", list(DATA_ARGS)) for i in range(3)]
        master_port = self.servers[0].port
        for server in self.servers[1:]:
            server.args += ["--replicaof", "127.0.0.1", str(master_port)]
        self.sentinels = [
            Node(
                root / f"sentinel-{i}",
                [
                    f"sentinel monitor {master_name} 127.0.0.1 {master_port} 2",
                    f"sentinel down-after-milliseconds {master_name} 1000",
                    f"sentinel failover-timeout {master_name} 10000",
                    f"sentinel parallel-syncs {master_name} 2",
                ],
                sentinel=True,
            )
            for i in range(3)
        ]

    def start(self) -> None:
        for node in [*self.servers, *self.sentinels]:
            node.start()

    def stop(self) -> None:
        for node in [*self.sentinels, *self.servers]:
            node.stop()

    async def master_port(self) -> int:
        """The port the sentinels name as master right now."""
        client = Redis(port=self.sentinels[0].port)
        try:
            _, port = await client.sentinel_get_master_addr_by_name(self.name)
            return int(port)
        finally:
            await client.aclose()

    async def replicas_follow(self, master: int, skip: tuple[int, ...] = ()) -> bool:
        """Every server but ``skip`` answers, and each one but ``master`` replicates it with its link up."""
        for server in self.servers:
            if server.port in skip:
                continue
            client = Redis(port=server.port)
            try:
                info = await client.info("replication")
            except (RedisError, OSError):
                return False
            finally:
                await client.aclose()
            if server.port != master and (info.get("master_port") != master or info.get("master_link_status") != "up"):
                return False
        return True

    def by_port(self, port: int) -> Node:
        return next(s for s in self.servers if s.port == port)

    @property
    def nodes(self) -> list[str]:
        return [f"127.0.0.1:{s.port}" for s in self.sentinels]


class ClusterSetup:
    """3 masters on loopback, no replicas (the test's minimum; docs/redis.md says to run Cluster with replicas)."""

    def __init__(self, root: Path) -> None:
        args = [*DATA_ARGS, "--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]
        # The bus port is given: the default (port + 10000) does not exist for the high ports the OS hands out.
        self.nodes = [
            Node(root / f"node-{i}", [*args, "--cluster-config-file", "nodes.conf", "--cluster-port", str(free_port())])
            for i in range(3)
        ]

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        subprocess.run(
            ["redis-cli", "--cluster", "create", *self.addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=30,
        )

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    @property
    def addresses(self) -> list[str]:
        return [f"127.0.0.1:{n.port}" for n in self.nodes]
