"""Keeping the venue in step with a pretix event over pretix's REST API.

``client`` speaks the API (pages, retries, errors a person can act on), ``token`` reads the API token from its file,
``records`` turns what pretix holds into the venue's attendee records.
"""
