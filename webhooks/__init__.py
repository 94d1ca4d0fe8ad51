"""Webhooks: the venue's confirmed prints and dead letters told to URLs an admin added, signed, retried for hours.

``hooks.py`` the webhooks an admin added (``P webhooks``); ``delivery.py`` one POST (body, signature, a bounded
answer); ``sender.py`` the one sender of a venue (a lease), a consumer of the printed record with a queue of pending
deliveries per webhook. docs/webhooks.md is the guide.
"""
