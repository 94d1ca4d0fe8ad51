"""Prometheus text, written one way for the agent, the intake and the staff counts: prometheus_client's exposition.

Each /metrics gathers its metric families (prometheus_client's ``*MetricFamily``) and ``exposition`` writes them.
Counters and histograms that count as things happen are the light ones here, plain Python that becomes a family
only when scraped: prometheus_client's package pulls in http.server, wsgiref and urllib.request (about 3 MB
resident, bench/footprint.py), which an agent nobody scrapes would carry for nothing, so it is imported at the first
scrape. The text (names, help, labels, ``_total`` and ``_created`` series, buckets) is prometheus_client's own.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric


def exposition(families: Iterable[Metric]) -> tuple[bytes, str]:
    """The text format of ``families`` as prometheus_client writes it, and its Content-Type."""
    from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
    from prometheus_client.registry import Collector

    class Families(Collector):
        def collect(self) -> Iterable[Metric]:
            return families

    return generate_latest(Families()), CONTENT_TYPE_LATEST


def _use_created() -> bool:
    """prometheus_client's own switch for the ``_created`` series, honoured the same way."""
    return os.environ.get("PROMETHEUS_DISABLE_CREATED_SERIES", "False").lower() not in ("true", "1", "t")


class CounterValue:
    """One series of a :class:`Counter` (``counter.labels(...)``)."""

    def __init__(self) -> None:
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        self.value += amount


class Counter:
    """A counter as prometheus_client's ``Counter`` is used here: ``inc()``, or ``labels(...).inc()``.

    Only the event loop's thread touches it, so no lock.
    """

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        # As prometheus_client does: an unlabelled counter is a series (0) from the start, a labelled one gets a
        # series per label set the first time it is used.
        self.series: dict[tuple[str, ...], CounterValue] = {} if self.labelnames else {(): CounterValue()}

    def labels(self, *values: str) -> CounterValue:
        key = _label_key(self.name, self.labelnames, values)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = CounterValue()
        return series

    def inc(self, amount: float = 1.0) -> None:
        if self.labelnames:
            raise ValueError(f"counter {self.name} has labels: use labels(...).inc()")
        self.series[()].inc(amount)

    def family(self) -> Metric:
        from prometheus_client.core import CounterMetricFamily

        created = _use_created()
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, series in self.series.items():
            family.add_metric(list(key), series.value, created=series.created if created else None)
        return family


class HistogramValue:
    """One series of a :class:`Histogram`: per-bucket counts (not cumulative), their sum, when it began."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        self.sum += amount
        for i, bound in enumerate(self.bounds):
            if amount <= bound:
                self.counts[i] += 1
                break


class Histogram:
    """A histogram as prometheus_client's ``Histogram`` is used here: ``labels(...).observe(seconds)``."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        bounds = [float(b) for b in buckets]
        if bounds != sorted(bounds):
            raise ValueError("buckets not in sorted order")
        self.bounds = (*bounds, float("inf")) if bounds[-1] != float("inf") else tuple(bounds)
        self.series: dict[tuple[str, ...], HistogramValue] = {}

    def labels(self, *values: str) -> HistogramValue:
        key = _label_key(self.name, self.labelnames, values)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = HistogramValue(self.bounds)
        return series

    def family(self) -> Metric:
        from prometheus_client.core import HistogramMetricFamily
        from prometheus_client.samples import Sample
        from prometheus_client.utils import floatToGoString

        created = _use_created()
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, series in self.series.items():
            cumulative, total = [], 0
            for bound, count in zip(self.bounds, series.counts, strict=True):
                total += count
                cumulative.append((floatToGoString(bound), float(total)))  # type: ignore[no-untyped-call]
            family.add_metric(list(key), cumulative, series.sum)
            if created:
                family.samples.append(
                    Sample(f"{self.name}_created", dict(zip(self.labelnames, key, strict=True)), series.created)
                )
        return family


def _label_key(name: str, labelnames: tuple[str, ...], values: tuple[str, ...]) -> tuple[str, ...]:
    if len(values) != len(labelnames):
        raise ValueError(f"{name}: expected labels {labelnames}, got {values}")
    return tuple(str(v) for v in values)
