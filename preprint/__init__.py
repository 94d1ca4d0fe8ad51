"""Pre-printed badges: a planned run of boxes, printed on the venue's pool (pool.py)."""
