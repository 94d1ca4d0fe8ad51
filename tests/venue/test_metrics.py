"""The agent's own counters expose exactly what prometheus_client's Counter and Histogram would.

The agent counts in plain Python and imports prometheus_client only to serve /metrics (agent/metrics.py); a scraper
must not see any difference: same names, help, types, labels, buckets, ``_created`` series.
"""

from __future__ import annotations

import re

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from agent.metrics import PRINT_BUCKETS, Counter, Histogram


def _exposition(*collectors: object) -> str:
    registry = CollectorRegistry()

    class Families:
        def collect(self):  # type: ignore[no-untyped-def]
            for c in collectors:
                yield c.family()  # type: ignore[attr-defined]

    registry.register(Families())
    return _mask_created(generate_latest(registry).decode())


def _mask_created(text: str) -> str:
    return re.sub(r"(_created(\{[^}]*\})?) \S+", r"\1 T", text)


def test_counters_and_histogram_match_prometheus_client() -> None:
    ours_plain = Counter("badge_x_printed", "Printed.")
    ours_labelled = Counter("badge_x_released", "Released, by outcome and result.", ["outcome", "result"])
    ours_unused = Counter("badge_x_skipped", "Never used: help and type only.", ["reason"])
    ours_hist = Histogram("badge_x_seconds", "Duration.", ["outcome"], buckets=PRINT_BUCKETS)

    registry = CollectorRegistry()
    theirs_plain = prometheus_client.Counter("badge_x_printed", "Printed.", registry=registry)
    theirs_labelled = prometheus_client.Counter(
        "badge_x_released", "Released, by outcome and result.", ["outcome", "result"], registry=registry
    )
    prometheus_client.Counter("badge_x_skipped", "Never used: help and type only.", ["reason"], registry=registry)
    theirs_hist = prometheus_client.Histogram(
        "badge_x_seconds", "Duration.", ["outcome"], buckets=PRINT_BUCKETS, registry=registry
    )

    for plain, labelled, hist in ((ours_plain, ours_labelled, ours_hist), (theirs_plain, theirs_labelled, theirs_hist)):
        plain.inc()
        plain.inc(2)
        labelled.labels("failed", "dead").inc()
        labelled.labels("unknown", "released").inc()
        labelled.labels("failed", "dead").inc()
        for outcome, seconds in (("printed", 0.1), ("printed", 0.25), ("printed", 7.9), ("failed", 61.0)):
            hist.labels(outcome).observe(seconds)
    assert _exposition(ours_plain, ours_labelled, ours_unused, ours_hist) == _mask_created(
        generate_latest(registry).decode()
    )


def test_labels_are_checked_like_prometheus_client() -> None:
    counter = Counter("badge_x", "X.", ["outcome"])
    with pytest.raises(ValueError, match="expected labels"):
        counter.labels("a", "b")
    with pytest.raises(ValueError, match="has labels"):
        counter.inc()
    with pytest.raises(ValueError, match="non-negative"):
        counter.labels("a").inc(-1)
