"""The pretix API token, read from a file that other users of the machine cannot read. Never logged."""

from __future__ import annotations

import stat
from pathlib import Path

from pretix_sync.errors import PretixConfigError


def read_token(path: Path) -> str:
    """The token in ``path`` (its first line, surrounding blanks stripped).

    Refused when every user of the machine may read or change the file: the token can check attendees in and read
    their personal data. 0600 (or 0640 with the service's own group, as the venue's other secrets) is accepted.
    """
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PretixConfigError(f"--token-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PretixConfigError(f"--token-file {path}: cannot be read ({exc.__class__.__name__})") from None
    if mode & (stat.S_IROTH | stat.S_IWOTH):
        raise PretixConfigError(
            f"--token-file {path}: every user of this machine can read it; it holds the pretix API token "
            f"(chmod 600 {path})"
        )
    lines = text.strip().splitlines()
    token = lines[0].strip() if lines else ""
    if not token:
        raise PretixConfigError(f"--token-file {path}: the file is empty (put the pretix API token in it)")
    if any(ch.isspace() for ch in token) or not token.isascii():
        raise PretixConfigError(f"--token-file {path}: the first line is not an API token (no spaces, ASCII only)")
    return token
