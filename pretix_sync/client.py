"""A small client of pretix's REST API (``/api/v1/``): the reads the venue's list needs, check-ins and print logs.

Every failure ends as a :class:`~pretix_sync.errors.PretixError` whose message names what to check; the token never
appears in one. A request that fails on the way (no answer, a 5xx, 429) is tried again a few times with growing
pauses; one that pretix refused (4xx) is not.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

import aiohttp
import msgspec
import yarl
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from pretix_sync.api_types import (
    BadgeLayout,
    CheckinList,
    EventInfo,
    Item,
    Order,
    Page,
    Position,
    PrintLog,
    RedeemResult,
)
from pretix_sync.errors import (
    PretixConfigError,
    PretixError,
    PretixMisbehaves,
    PretixNotFound,
    PretixRefused,
    PretixUnavailable,
    ReadStopped,
)

T = TypeVar("T")

#: pretix's largest page (its API caps page_size at 50).
PAGE_SIZE = 50

#: The most results one listing may bring, whatever pretix announces: far more tickets than any venue prints badges
#: for. A list that announces more is refused at its first page, before anything is read.
MAX_RESULTS = 1_000_000

#: A badge layout's background PDF larger than this is refused (a designer's backgrounds are a few hundred KB).
MAX_DOWNLOAD = 20 * 1024 * 1024


#: A ticket cancelled on its own is still found (a badge printed before its cancellation is still logged on it).
_WITH_CANCELLED = {"include_canceled_positions": "true"}


class _Transient(PretixUnavailable):
    """A failure worth trying again (no answer, 5xx, 429); the last one is raised as it is."""


def _detail(body: bytes) -> str:
    """pretix's own word on an error (its ``detail``), short, or the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return body[:120].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        for key in ("detail", "reason_explanation", "reason"):
            if data.get(key):
                return str(data[key])[:300]
    return json.dumps(data, ensure_ascii=False)[:300]


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(parts.scheme)


def _page_key(url: str) -> bytes:
    """A page's URL as the read remembers it: normalised (``%7E`` and ``~`` alike, the port a scheme implies left
    out), and hashed so that a pretix that sends megabyte-long links costs 32 bytes a page."""
    return hashlib.sha256(str(yarl.URL(url)).encode()).digest()


class PretixClient:
    """One event's API, as one API token sees it.

    Args:
        url: pretix's address, e.g. ``https://pretix.eu`` (``/api/v1`` is added).
        organizer: the organizer's short name.
        event: the event's short name.
        token: a team API token.
        attempts: tries of a request that fails on the way before giving up.
        timeout: seconds one request may take.
        max_results: the most results one listing may bring (:data:`MAX_RESULTS`).
        stop: once set, a listing stops before its next page (:class:`ReadStopped`); the request under way is the
            caller's to cancel.
    """

    def __init__(
        self,
        url: str,
        organizer: str,
        event: str,
        token: str,
        *,
        attempts: int = 4,
        timeout: float = 30.0,
        max_pause: float = 5.0,
        max_results: int = MAX_RESULTS,
        stop: asyncio.Event | None = None,
    ) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PretixConfigError(f"--pretix {url!r} is not an http(s) address (e.g. https://pretix.example.org)")
        self.base = url.strip().rstrip("/").removesuffix("/api/v1")
        self.organizer = organizer
        self.event = event
        self._token = token
        self._attempts = attempts
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._max_pause = max_pause
        self.max_results = max_results
        self.stop = stop
        self._session: aiohttp.ClientSession | None = None
        #: Seconds spent waiting for pretix's answers (request sent -> answer read), all requests added up.
        self.waited = 0.0

    @property
    def event_path(self) -> str:
        return f"/api/v1/organizers/{self.organizer}/events/{self.event}"

    def __repr__(self) -> str:  # the token stays out of every log line and traceback
        return f"PretixClient({self.base!r}, {self.organizer!r}, {self.event!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self._session

    # -- the requests ------------------------------------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        url: str,
        *,
        what: str,
        params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
        answers: frozenset[int] = frozenset(),
        extra_headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """One request; ``answers`` are statuses besides 2xx the caller reads itself (a refused check-in)."""
        headers = {"Accept": "application/json", **(extra_headers or {})}
        if _origin(url) == _origin(self.base):  # the token goes to pretix only, never to a host a URL points at
            headers["Authorization"] = f"Token {self._token}"
        started = time.perf_counter()
        try:
            async with self._client().request(
                method, url, params=params, json=body, headers=headers, allow_redirects=False
            ) as response:
                status = response.status
                location = response.headers.get("Location", "")
                received = bytearray()
                # A read of the stream returns what has arrived so far, not the whole answer: read to its end.
                async for chunk in response.content.iter_chunked(256 * 1024):
                    received += chunk
                    if len(received) > MAX_DOWNLOAD:
                        break
                data = bytes(received)
        except aiohttp.InvalidURL as exc:
            raise PretixConfigError(f"--pretix {self.base}: not a usable address ({exc})") from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            reason = str(exc) or exc.__class__.__name__
            raise _Transient(
                f"pretix at {self.base} cannot be reached ({reason}): check --pretix and this machine's network"
            ) from None
        finally:
            self.waited += time.perf_counter() - started
        if len(data) > MAX_DOWNLOAD:
            raise PretixConfigError(f"pretix at {self.base}: {what} is larger than {MAX_DOWNLOAD // 2**20} MB")
        if 200 <= status < 300 or status in answers:
            return status, data
        raise self._failure(status, data, what, location)

    def _failure(self, status: int, data: bytes, what: str, location: str) -> PretixError:
        """What an answer that is not a success means, and what to check."""
        detail = _detail(data)
        if status in (301, 302, 303, 307, 308):
            return PretixConfigError(
                f"pretix at {self.base} sends {what} elsewhere ({status} to {location}): use pretix's own address in"
                " --pretix (https?)"
            )
        if status == 401:
            return PretixConfigError(
                f"pretix at {self.base} refused the API token ({detail}): check --token-file; the token may be wrong"
                " or revoked (pretix: organizer settings, Teams, API tokens)"
            )
        if status == 403:
            # pretix answers 403, not 404, for an organizer or event that does not exist as for one the token's
            # team may not see: it does not tell which, so neither can we.
            return PretixConfigError(
                f"pretix at {self.base} refused {what} ({detail}): check --event {self._ev} (the organizer's and"
                " the event's short names as pretix shows them) and that the token's team has this event and may read"
                " its orders"
            )
        if status == 404:
            if not data.lstrip().startswith(b"{"):
                return PretixConfigError(
                    f"no pretix API at {self.base} ({what} not found): check --pretix (pretix's address, without"
                    " /api/v1)"
                )
            return PretixNotFound(f"pretix at {self.base} has no {what} ({detail}): check --event and the ids given")
        if status == 429 or status >= 500:
            return _Transient(
                f"pretix at {self.base} failed on its side (HTTP {status}) on {what}: try again later; pretix's own"
                " log says why"
            )
        return PretixRefused(f"pretix at {self.base} refused {what} (HTTP {status}: {detail})")

    async def _request(self, method: str, url: str, *, retry: bool = True, **kwargs: Any) -> tuple[int, bytes]:
        """:meth:`_send`, tried again on failures on the way when ``retry`` (safe for reads, and for check-ins,
        which carry a nonce)."""
        attempts = self._attempts if retry else 1
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(_Transient),
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=0.25, max=self._max_pause),
            reraise=True,
        ):
            with attempt:
                return await self._send(method, url, **kwargs)
        raise AssertionError("unreachable: tenacity reraises the last failure")

    def _decode(self, data: bytes, into: type[T], what: str) -> T:
        try:
            return msgspec.json.decode(data, type=into)
        except msgspec.ValidationError as exc:  # before DecodeError, its base class
            raise PretixConfigError(
                f"pretix at {self.base} answered {what} in a shape this version does not know ({exc}): check"
                " --pretix and pretix's version"
            ) from None
        except msgspec.DecodeError:
            raise PretixConfigError(
                f"pretix at {self.base} answered {what} with something that is not JSON: check --pretix (is it"
                " pretix's address?)"
            ) from None

    async def _get(self, path: str, into: type[T], what: str, params: dict[str, str] | None = None) -> T:
        _, data = await self._request("GET", self.base + path, what=what, params=params)
        return self._decode(data, into, what)

    async def _pages(
        self, path: str, into: type[T], what: str, params: dict[str, str] | None = None
    ) -> AsyncIterator[T]:
        """Every result of a paged list, following pretix's ``next`` links (which must stay on pretix).

        A pretix that fails on its side cannot keep the read going for ever: a ``next`` link to a page already read
        ends it, and so do more results or pages than the ``count`` its first page announced allows
        (:meth:`_bounds`). Before each page the read stops if ``stop`` is set."""
        url: str | None = self.base + path
        query: dict[str, str] | None = {"page_size": str(PAGE_SIZE), **(params or {})}
        seen = {_page_key(str(yarl.URL(self.base + path).update_query(query)))}
        count = results = pages = 0
        most_results = most_pages = 0
        while url is not None:
            if self.stop is not None and self.stop.is_set():
                raise ReadStopped(f"stopped while reading {what}")
            _, data = await self._request("GET", url, what=what, params=query)
            page = self._decode(data, Page[into], what)  # type: ignore[valid-type]
            del data  # a page's bytes go before its results are handed on
            pages += 1
            if pages == 1:
                count = page.count
                most_results, most_pages = self._bounds(count, what)
            results += len(page.results)
            if results > most_results or pages > most_pages:
                raise PretixMisbehaves(
                    f"pretix at {self.base} keeps sending {what}: {results} result(s) in {pages} page(s) after its"
                    f" first page announced {count}, more than the {most_results} result(s) in {most_pages} page(s) a"
                    " list of that count may bring, so the read stopped. pretix fails on its side: try again later;"
                    " pretix's own log says why"
                )
            for result in page.results:
                yield result
            if page.next is None:
                return
            if _origin(page.next) != _origin(self.base):
                raise PretixConfigError(
                    f"pretix at {self.base} links the next page of {what} to {page.next}: set pretix's own url"
                    " (its pretix.cfg [pretix] url) to the address used in --pretix"
                )
            key = _page_key(page.next)
            if key in seen:
                raise PretixMisbehaves(
                    f"pretix at {self.base} links page {pages} of {what} to a page already read"
                    f" ({page.next[:200]}): a loop, so the read stopped. pretix fails on its side: try again later;"
                    " pretix's own log says why"
                )
            seen.add(key)
            url, query = page.next, None  # the next link carries the query

    def _bounds(self, count: int, what: str) -> tuple[int, int]:
        """The most results and pages a listing whose first page announced ``count`` may bring.

        Twice the count, at least one page more than it: orders placed while the list is read add to it, but
        pretix counts again on every page, so a real list never doubles. Never more than ``max_results``.
        """
        if count < 0 or count > self.max_results:
            said = (
                f"a count of {count} for {what}"
                if count < 0
                else f"{count} {what}, more than the {self.max_results} one listing may hold here"
            )
            raise PretixMisbehaves(
                f"pretix at {self.base} announces {said}, so nothing was read. pretix fails on its side: try again"
                " later; pretix's own log says why"
            )
        most = min(max(2 * count, count + PAGE_SIZE), self.max_results)
        return most, most // PAGE_SIZE + 2

    # -- reads -------------------------------------------------------------------------------------------------------

    async def items(self) -> list[Item]:
        """The event's products (ids and names)."""
        return [i async for i in self._pages(f"{self.event_path}/items/", Item, f"the products of {self._ev}")]

    async def checkin_lists(self) -> list[CheckinList]:
        return [
            c
            async for c in self._pages(f"{self.event_path}/checkinlists/", CheckinList, f"check-in lists of {self._ev}")
        ]

    async def checkin_list(self, list_id: int) -> CheckinList:
        path = f"{self.event_path}/checkinlists/{list_id}/"
        return await self._get(path, CheckinList, f"check-in list {list_id} of event {self._ev}")

    def checkin_list_positions(
        self, list_id: int, *, order: str | None = None, ignore_status: bool = False
    ) -> AsyncIterator[Position]:
        """The positions a check-in list admits, as pretix decides (order paid, or pending where the list allows;
        its products; not cancelled). ``order``: only that order's. ``ignore_status``: orders in any state."""
        params = {"ignore_status": "true"} if ignore_status else {}
        if order is not None:
            params["order"] = order
        path = f"{self.event_path}/checkinlists/{list_id}/positions/"
        return self._pages(path, Position, f"the positions of check-in list {list_id} of event {self._ev}", params)

    def orders(
        self, *, modified_since: str | None = None, status: str | None = None, newest_first: bool = False
    ) -> AsyncIterator[Order]:
        """The event's orders with their positions, cancelled ones included; with ``modified_since`` (ISO 8601)
        only those changed since then (pretix keeps an order's ``last_modified`` current when a position in it
        changes). Note: pretix filters orders by it; its orderpositions list ignores the parameter. ``status``:
        only orders in that state (n pending, p paid, e expired, c cancelled). ``newest_first``: by
        ``last_modified``, the last changed first."""
        params = {"include_canceled_positions": "true"}
        if newest_first:
            params["ordering"] = "-last_modified"
        if modified_since is not None:
            params["modified_since"] = modified_since
        if status is not None:
            params["status"] = status
        return self._pages(f"{self.event_path}/orders/", Order, f"the orders of event {self._ev}", params)

    async def order(self, code: str) -> Order:
        """One order with all its positions, cancelled ones included."""
        path = f"{self.event_path}/orders/{code}/"
        return await self._get(path, Order, f"order {code} of event {self._ev}", _WITH_CANCELLED)

    async def testmode(self) -> bool:
        """Whether the event is in pretix's test mode (orders made then are test orders)."""
        _, data = await self._request("GET", self.base + self.event_path + "/", what=f"the event {self._ev}")
        return self._decode(data, EventInfo, f"the event {self._ev}").testmode

    async def position_by_secret(self, secret: str) -> Position | None:
        """The ticket whose secret this is (cancelled or not), or None."""
        path = f"{self.event_path}/orderpositions/"
        what = f"the ticket of a code in event {self._ev}"
        found = [p async for p in self._pages(path, Position, what, {**_WITH_CANCELLED, "secret": secret})]
        return found[0] if found else None

    async def create_order(self, body: dict[str, Any], *, simulate: bool, key: str = "") -> Order:
        """pretix's order creation (``simulate``: checked as it would be made, nothing saved). ``key``: pretix's
        ``X-Idempotency-Key``, so the same order sent again after a lost answer gets the first one's answer, not
        a second order. Not tried again on its own: the caller looks the order up before sending it again."""
        what = "a simulated order" if simulate else "an order"
        status, data = await self._request(
            "POST",
            f"{self.base}{self.event_path}/orders/",
            retry=False,
            what=what,
            body={**body, "simulate": simulate},
            extra_headers={"X-Idempotency-Key": key} if key else None,
            answers=frozenset({409}),
        )
        if status == 409:  # pretix is still making the first request with this key: its answer comes later
            raise PretixUnavailable(f"pretix at {self.base} is still making {what} sent before ({_detail(data)})")
        return self._decode(data, Order, what)

    async def badge_layouts(self) -> list[BadgeLayout]:
        """The event's layouts from pretix's badge designer (its badges plugin must be on for the event)."""
        path = f"{self.event_path}/badgelayouts/"
        return [b async for b in self._pages(path, BadgeLayout, f"the badge layouts of event {self._ev}")]

    async def download(self, url: str) -> bytes:
        """A file pretix links to (a badge layout's background PDF). The token is sent only to pretix itself."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise PretixConfigError(f"pretix at {self.base} links a file at {url!r}, which is not an http(s) address")
        _, data = await self._request("GET", url, what=f"the file {parts.path}")
        return data

    # -- writes ------------------------------------------------------------------------------------------------------

    async def redeem(self, secret: str, list_ids: list[int], nonce: str, when: str | None = None) -> RedeemResult:
        """Check a ticket in on the given lists (entry). The same ``nonce`` again makes no second check-in: pretix
        answers ok and records nothing new, so a check-in whose answer was lost can be sent again safely.
        ``when`` (ISO 8601): the check-in's time, if not now (a check-in sent after an outage)."""
        body: dict[str, Any] = {
            "secret": secret,
            "lists": list_ids,
            "type": "entry",
            "nonce": nonce,
            "source_type": "barcode",
        }
        if when is not None:
            body["datetime"] = when
        what = f"a check-in on list(s) {', '.join(map(str, list_ids))}"
        status, data = await self._request(
            "POST",
            f"{self.base}/api/v1/organizers/{self.organizer}/checkinrpc/redeem/",
            what=what,
            body=body,
            answers=frozenset({400, 404}),  # a refused check-in: pretix says why in the body
        )
        if status in (400, 404) and b'"status"' not in data:
            # Not a refused check-in but a refused request: {"lists": ["Invalid pk ..."]} for an unknown list.
            raise PretixConfigError(f"pretix at {self.base} refused {what} ({_detail(data)}): check --checkin-list")
        return self._decode(data, RedeemResult, what)

    async def print_log(
        self, position_id: int, info: dict[str, Any], source: str = "badge-agent", when: str | None = None
    ) -> PrintLog:
        """Record a printed badge on the position (``when``: the print's time, if not now). Not tried again on its
        own: pretix has no nonce for print logs, so a second post would be a second entry (look at the position's
        ``print_logs`` first)."""
        what = f"a print log on position {position_id}"
        body: dict[str, Any] = {"source": source, "type": "badge", "info": info}
        if when is not None:
            body["datetime"] = when
        _, data = await self._request(
            "POST",
            f"{self.base}{self.event_path}/orderpositions/{position_id}/printlog/",
            retry=False,
            what=what,
            body=body,
            params=_WITH_CANCELLED,
        )
        return self._decode(data, PrintLog, what)

    async def position(self, position_id: int) -> Position:
        """One ticket, cancelled or not."""
        path = f"{self.event_path}/orderpositions/{position_id}/"
        return await self._get(path, Position, f"position {position_id} of event {self._ev}", _WITH_CANCELLED)

    @property
    def _ev(self) -> str:
        return f"{self.organizer}/{self.event}"


__all__ = ["PretixClient", "PretixError"]
