"""Files as a venue downloads them from pretix: made by the running test pretix's own exporters, through its REST API
(``POST .../exporters/{identifier}/run/``, then the download URL until the file is ready)."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from typing import Any

#: How long a test waits for pretix to build a file (its tasks run in the request in the tests' pretix, no worker).
EXPORT_TIMEOUT = 60.0


def _request(url: str, token: str, body: dict[str, Any] | None = None) -> tuple[int, bytes, str]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    request.add_header("Authorization", f"Token {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(), response.headers.get("Content-Disposition", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), ""


def pretix_export(
    url: str, token: str, organizer: str, event: str, identifier: str, fmt: str, **options: Any
) -> tuple[str, bytes]:
    """(file name, content) of exporter ``identifier`` in format ``fmt`` (pretix's ``_format``: ``xlsx``, ``default``,
    ``csv-excel``, ``semicolon``; "Order data" names its sheet: ``positions:default``), with its form ``options``."""
    base = f"{url}/api/v1/organizers/{organizer}/events/{event}/exporters/{identifier}/run/"
    status, body, _ = _request(base, token, {"_format": fmt, **options})
    if status != 202:
        raise RuntimeError(f"pretix refused export {identifier} {fmt}: HTTP {status} {body[:500]!r}")
    download = json.loads(body)["download"]
    deadline = time.monotonic() + EXPORT_TIMEOUT
    while True:
        status, body, disposition = _request(download, token)
        if status == 200:
            found = re.search(r'filename="?([^";]+)"?', disposition)
            return (found.group(1) if found else f"{identifier}.bin"), body
        if status != 409 or time.monotonic() > deadline:  # 409: not ready yet
            raise RuntimeError(f"pretix export {identifier} {fmt}: HTTP {status} {body[:500]!r}")
        time.sleep(0.2)  # polling pretix's own "not ready yet", not timing anything
