"""What can go wrong talking to pretix, each with the exit status the CLI ends with and what to check."""

from __future__ import annotations

from core.errors import EXIT_CONFIG, UserError

#: sysexits EX_UNAVAILABLE: pretix could not be reached or failed on its side; trying again later may work.
EXIT_UNAVAILABLE = 69


class PretixError(UserError):
    """A pretix request failed in a way the person running the sync can act on; the message says what to check."""

    exit_code = EXIT_CONFIG


class PretixConfigError(PretixError):
    """The settings are wrong: the URL is not a pretix, the token is wrong or revoked, the event does not exist."""

    exit_code = EXIT_CONFIG


class PretixNotFound(PretixConfigError):
    """pretix has no such object (a 404 with pretix's own answer): an order or a ticket of another event, or deleted.
    Fatal where the settings name it (a check-in list); a lookup of one ticket skips it."""


class PretixUnavailable(PretixError):
    """pretix did not answer, or answered with a server error: nothing to fix here, try again later."""

    exit_code = EXIT_UNAVAILABLE


class PretixMisbehaves(PretixUnavailable):
    """pretix answered, but not as pretix does: a next page that leads back to one already read, more results than
    it announced, more than one listing may hold. Nothing to fix in the settings: pretix (or what answers at its
    address) fails on its side, as with a 5xx."""


class ReadStopped(Exception):
    """The read was asked to stop (SIGTERM, Ctrl-C) and stopped between two pages or two batches: a clean stop."""


class PretixRefused(PretixError):
    """pretix understood the request and said no (a 400 with its reason): the request, not the settings."""

    exit_code = 1
