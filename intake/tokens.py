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
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import UserError
from protocol.keys import PRINTER_RE

ROLES = ("kiosk", "desk", "staff", "viewer")
#: A token's name: it is written into events (``token:<name>``) and Redis key names (``owned:<name>``).
TOKEN_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
#: A zone's name (a key of the intake config's ``zones:``), as a token file stores it.
ZONE_NAME_RE = TOKEN_NAME_RE
PREFIX = "bdg_"  # so a token pasted into the wrong place is recognisable (secret scanners, a reviewer)


#: Jobs a token may have outstanding (created, not yet printed, dead or cancelled) unless ``token add`` says otherwise:
#: a kiosk serves one attendee at a time; a desk a queue of them; staff load a list.
MAX_OUTSTANDING = {"kiosk": 5, "desk": 200, "staff": 1000, "viewer": 0}


@dataclass(frozen=True)
class Token:
    name: str
    role: str
    created: str
    #: Outstanding jobs this token may have; one more answers 429.
    max_outstanding: int = 0
    #: The printers this token may pin a job to; empty: any.
    printers: tuple[str, ...] = ()
    #: The zone (the intake config's ``zones:``) whose printers print this token's attendee badges; "" for none.
    zone: str = ""


def _token(name: str, entry: dict[str, Any]) -> Token:
    role = str(entry.get("role"))
    cap = entry.get("max_outstanding")
    printers = entry.get("printers")
    return Token(
        name,
        role,
        str(entry.get("created", "")),
        cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 0 else MAX_OUTSTANDING.get(role, 0),
        tuple(p for p in printers if isinstance(p, str)) if isinstance(printers, list) else (),
        zone if isinstance(zone := entry.get("zone"), str) else "",
    )


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

    def add(
        self,
        name: str,
        role: str,
        max_outstanding: int | None = None,
        printers: tuple[str, ...] = (),
        zone: str = "",
    ) -> str:
        """A new token for ``name``; returns the secret (the only time it exists outside its holder).

        ``max_outstanding``: its cap of jobs not yet final (None: the role's default, ``MAX_OUTSTANDING``);
        ``printers``: the only printers it may pin a job to (empty: any); ``zone``: the zone whose printers print
        its attendee badges (the caller checks that the intake config defines it).
        """
        if role not in ROLES:
            raise UserError(f"role: must be one of {', '.join(ROLES)}, not {role!r}")
        if not TOKEN_NAME_RE.match(name):
            raise UserError(f"name: letters, digits, '-', '_' or '.', at most 64 characters, not {name!r}")
        if max_outstanding is not None and not 0 <= max_outstanding <= 100_000:
            raise UserError(f"max outstanding: must be from 0 to 100000, not {max_outstanding}")
        for printer in printers:
            if not PRINTER_RE.match(printer):
                raise UserError(f"printer: not a printer name (lowercase letters, digits, - and _): {printer!r}")
        if zone and role == "viewer":
            raise UserError("zone: a viewer token prints nothing; bind a kiosk, desk or staff token to a zone")
        if zone and not ZONE_NAME_RE.match(zone):
            raise UserError(f"zone: letters, digits, '-', '_' or '.', at most 64 characters, not {zone!r}")
        tokens = self._read()
        if name in tokens:
            raise UserError(f"a token named {name!r} exists; revoke it first")
        secret = PREFIX + secrets.token_urlsafe(32)
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        entry: dict[str, Any] = {"role": role, "sha256": digest(secret), "created": created}
        entry["max_outstanding"] = MAX_OUTSTANDING[role] if max_outstanding is None else max_outstanding
        if printers:
            entry["printers"] = sorted(set(printers))
        if zone:
            entry["zone"] = zone
        tokens[name] = entry
        self._write(tokens)
        return secret

    def revoke(self, name: str) -> bool:
        tokens = self._read()
        if tokens.pop(name, None) is None:
            return False
        self._write(tokens)
        return True

    def list(self) -> list[Token]:
        return [_token(n, t) for n, t in sorted(self._read().items()) if isinstance(t, dict)]

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
                    by_hash[t["sha256"]] = _token(name, t)
            self._by_hash, self._seen = by_hash, seen
        return self._by_hash.get(digest(secret))
