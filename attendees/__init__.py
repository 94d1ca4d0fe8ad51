"""The attendee list at the venue: kept in the venue's Redis, looked up by ticket code, searched by name.

One attendee has one badge job, whichever desk, kiosk or import asks for it (``attendee_badge.lua`` creates it
exactly once).
"""
