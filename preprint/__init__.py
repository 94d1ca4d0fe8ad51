"""Pre-printed badges, planned: a run of the attendees without a badge, sorted by name and split into boxes, kept in
the venue's Redis beside the attendee list; printed as a PDF here, or on the venue's printers.

A pre-printed badge is not an arrival: the attendee is checked in when the desk hands it over.
"""
