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


class PretixUnavailable(PretixError):
    """pretix did not answer, or answered with a server error: nothing to fix here, try again later."""

    exit_code = EXIT_UNAVAILABLE


class PretixRefused(PretixError):
    """pretix understood the request and said no (a 400 with its reason): the request, not the settings."""

    exit_code = 1
