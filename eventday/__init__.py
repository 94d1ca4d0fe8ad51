"""The event day at a glance: arrivals per minute and zone, each zone's expected wait, labels left per printer and the
faults a person must clear, computed from the venue's Redis for the board, the intake (/metrics, the kiosk's wait,
the desk's counts) and the webhooks sender (``counts.event_day``; ``rolls.mark_roll`` for ``badge-agent roll``).
"""
