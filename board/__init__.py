"""The fleet board (``badge-agent board``): one live page of every printer for the team's phones.

``server`` polls Redis once for every viewer and pushes changes to the page (``index.html``, ``board.js``,
``board.css``) over Server-Sent Events; ``venue_view`` is the venue as people see it, the protocol's fleet view with
the attendee list's counts and the pretix outbox added (also used by ``status`` and the demo).
"""
