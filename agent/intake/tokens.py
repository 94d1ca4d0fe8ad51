"""Intake tokens: random secrets shown once, stored as SHA-256 hashes in a 0600 JSON file.

The file is read again whenever it changes (its mtime and size are looked at on each request), so ``token revoke``
takes effect on a running service without a restart. The secret itself is never written anywhere: a leaked token
file does not let anyone in. A token has 256 random bits, so a plain hash (no salt, no slow KDF) is enough: there
is nothing to guess.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.errors import UserError

ROLES = ("kiosk", "desk", "staff", "viewer")
PREFIX = "bdg_"  # so a token pasted into the wrong place is recognisable (secret scanners, a reviewer)


@dataclass(frozen=True)
class Token:
    name: str
    role: str
    created: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenFile:
    """The token file, as the service and ``intake token`` see it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int] | None = None
        self._by_hash: dict[str, Token] = {}

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise UserError(f"{self.path}: cannot read the token file: {exc}") from None
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, dict):
            raise UserError(f"{self.path}: not a token file (no 'tokens' mapping)")
        return tokens

    def _write(self, tokens: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"tokens": tokens}, out, indent=2, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)

    def add(self, name: str, role: str) -> str:
        """A new token for ``name``; returns the secret (the only time it exists outside its holder)."""
        if role not in ROLES:
            raise UserError(f"role: must be one of {', '.join(ROLES)}, not {role!r}")
        if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise UserError(f"name: letters, digits, '-', '_' or '.', at most 64 characters, not {name!r}")
        tokens = self._read()
        if name in tokens:
            raise UserError(f"a token named {name!r} exists; revoke it first")
        secret = PREFIX + secrets.token_urlsafe(32)
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        tokens[name] = {"role": role, "sha256": digest(secret), "created": created}
        self._write(tokens)
        return secret

    def revoke(self, name: str) -> bool:
        tokens = self._read()
        if tokens.pop(name, None) is None:
            return False
        self._write(tokens)
        return True

    def list(self) -> list[Token]:
        return [Token(n, str(t.get("role")), str(t.get("created", ""))) for n, t in sorted(self._read().items())]

    def lookup(self, secret: str) -> Token | None:
        """The token this secret belongs to, from the file as it is now; None for an unknown or revoked one."""
        try:
            st = self.path.stat()
            seen: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            seen = None
        if seen != self._seen:
            by_hash = {}
            for name, t in (self._read() if seen else {}).items():
                if isinstance(t, dict) and t.get("role") in ROLES and isinstance(t.get("sha256"), str):
                    by_hash[t["sha256"]] = Token(name, t["role"], str(t.get("created", "")))
            self._by_hash, self._seen = by_hash, seen
        return self._by_hash.get(digest(secret))
