"""An asyncio IPP client over aiohttp: one printer URI, its certificate pinned for ``ipps://``, replies capped.

Every failure comes out as :class:`IppError` with a message that names the printer's URI and what to check: no
answer, not IPP, an IPP error status, a reply over :data:`MAX_REPLY`, a certificate other than the pinned one.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from drivers.ipp import wire

#: The largest reply read: a printer's attributes are tens of kilobytes (a large office printer's media database
#: under 200 KB); more is a printer or a proxy answering with something else, and is not read into memory.
MAX_REPLY = 1 << 20
DEFAULT_PORT = 631
USER = "badge-agent"


class IppError(Exception):
    """The printer could not be asked, or answered with something other than a good IPP reply."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        #: The IPP status code when the printer answered with an error status; None for link and format failures.
        self.status = status


def parse_fingerprint(text: str) -> bytes:
    """A SHA-256 certificate fingerprint as ``openssl x509 -fingerprint -sha256`` prints it (with or without
    colons, any case). Raises ValueError naming the problem."""
    hexdigits = re.sub(r"[\s:]", "", text)
    if not re.fullmatch(r"[0-9A-Fa-f]{64}", hexdigits):
        raise ValueError(
            f"not a SHA-256 fingerprint: {text!r} (64 hex digits, as "
            "`openssl x509 -noout -fingerprint -sha256` prints it)"
        )
    return bytes.fromhex(hexdigits)


def format_fingerprint(digest: bytes) -> str:
    return ":".join(f"{b:02X}" for b in digest)


def http_url(uri: str) -> str:
    """``ipp://host[:port]/path`` as the ``http://`` URL the request is posted to (``ipps`` as ``https``)."""
    parts = urlsplit(uri)
    scheme = {"ipp": "http", "ipps": "https"}.get(parts.scheme)
    if scheme is None or not parts.hostname:
        raise ValueError(f"not an IPP printer URI: {uri!r} (ipp://HOST[:PORT]/PATH or ipps://...)")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return urlunsplit((scheme, f"{host}:{parts.port or DEFAULT_PORT}", parts.path or "/", "", ""))


async def peer_fingerprint(uri: str, timeout: float = 3.0) -> bytes:
    """The SHA-256 of the certificate an ``ipps://`` printer presents, for pinning it at setup (not verified: a
    printer's certificate is self-signed; pinning is the check)."""
    parts = urlsplit(uri)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_connection(parts.hostname, parts.port or DEFAULT_PORT, ssl=context)
    except (OSError, TimeoutError, ssl.SSLError) as exc:
        raise IppError(f"{uri}: cannot read its certificate: {exc or type(exc).__name__}") from None
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    finally:
        writer.close()
    if not der:
        raise IppError(f"{uri}: the printer presented no certificate")
    return hashlib.sha256(der).digest()


class IppClient:
    """Requests to one printer (or CUPS queue). Open with ``async with`` or :meth:`open`; close with :meth:`aclose`."""

    def __init__(
        self,
        uri: str,
        *,
        tls_fingerprint: str | None = None,
        connect_timeout: float = 3.0,
        io_timeout: float = 10.0,
        max_reply: int = MAX_REPLY,
    ) -> None:
        self.uri = uri
        self.url = http_url(uri)
        self.secure = uri.startswith("ipps:")
        self.fingerprint = parse_fingerprint(tls_fingerprint) if tls_fingerprint else None
        if self.secure and self.fingerprint is None:
            raise ValueError(f"{uri}: an ipps:// printer needs its certificate's SHA-256 fingerprint pinned")
        self.connect_timeout = connect_timeout
        self.io_timeout = io_timeout
        self.max_reply = max_reply
        self._session: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        if self._session is None or self._session.closed:
            # One connection at a time: the driver never overlaps requests, and a printer's IPP server has few.
            connector = aiohttp.TCPConnector(limit=1, force_close=False)
            self._session = aiohttp.ClientSession(connector=connector)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> IppClient:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(
        self,
        operation: int,
        attributes: dict[str, Any],
        job_attributes: dict[str, Any] | None = None,
        data: bytes = b"",
        *,
        timeout: float | None = None,
        check: bool = True,
    ) -> wire.Response:
        """Send one operation; the reply decoded. ``check``: an IPP error status raises (with the status)."""
        await self.open()
        assert self._session is not None
        attrs = {"printer-uri": wire.Value(wire.URI, self.uri), "requesting-user-name": wire.Value(wire.NAME, USER)}
        attrs.update(attributes)
        body = wire.encode_request(operation, attrs, job_attributes, data)
        pin: Any = aiohttp.Fingerprint(self.fingerprint) if self.fingerprint is not None else None
        limits = aiohttp.ClientTimeout(total=None, connect=self.connect_timeout, sock_read=timeout or self.io_timeout)
        try:
            async with self._session.post(
                self.url, data=body, headers={"Content-Type": "application/ipp"}, ssl=pin, timeout=limits
            ) as reply:
                if reply.status != 200:
                    raise IppError(
                        f"{self.uri}: HTTP {reply.status} {reply.reason or ''} (is this the printer's IPP path?)"
                    )
                raw = await self._read_capped(reply)
        except aiohttp.ServerFingerprintMismatch as exc:
            raise IppError(
                f"{self.uri}: the printer's certificate is not the pinned one (SHA-256 {format_fingerprint(exc.got)}, "
                f"pinned {format_fingerprint(exc.expected)}): a different device answers at this address, or the "
                "printer made a new certificate; check it and pin the new one in driver.tls_fingerprint"
            ) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise IppError(f"{self.uri}: no answer: {_describe(exc)}") from None
        try:
            response = wire.decode_response(raw)
        except wire.IppDecodeError as exc:
            raise IppError(f"{self.uri}: the answer is not IPP: {exc}") from None
        if check and not response.ok:
            raise IppError(f"{self.uri}: {response.status_message}", response.status)
        return response

    async def _read_capped(self, reply: aiohttp.ClientResponse) -> bytes:
        chunks = bytearray()
        async for chunk in reply.content.iter_chunked(65536):
            chunks += chunk
            if len(chunks) > self.max_reply:
                raise IppError(f"{self.uri}: the answer is larger than {self.max_reply // 1024} KiB; not read further")
        return bytes(chunks)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
