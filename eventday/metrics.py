"""The event day's numbers as Prometheus metric families (the intake's /metrics writes them with
core/exposition.py): a zone's wait, its rate and badges waiting, each printer's labels left, prints in the last hour
and how long its fault has waited for a person."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventday.counts import EventDay

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

#: The window the recent arrivals are counted over in /metrics (the board draws the whole curve).
RECENT_MIN = 15


def metric_families(day: EventDay) -> list[Metric]:
    from prometheus_client.core import GaugeMetricFamily

    waiting = GaugeMetricFamily("badge_zone_waiting", "Badges waiting per zone (- for no zone).", labels=["zone"])
    rate = GaugeMetricFamily(
        "badge_zone_rate_per_minute", "Badges a zone printed a minute over the last 5 minutes.", labels=["zone"]
    )
    wait = GaugeMetricFamily(
        "badge_zone_wait_minutes",
        "A zone's expected wait: badges waiting / its printing rate (absent while it has no rate).",
        labels=["zone"],
    )
    arrived = GaugeMetricFamily(
        "badge_zone_arrivals_recent",
        f"First badges printed and pre-printed badges handed over per zone in the last {RECENT_MIN} minutes.",
        labels=["zone"],
    )
    for z in day.zones:
        waiting.add_metric([z.zone], z.waiting)
        rate.add_metric([z.zone], z.per_minute)
        if z.wait_minutes is not None:
            wait.add_metric([z.zone], z.wait_minutes)
    for zone in sorted(set(day.arrivals) | set(day.handed_over)):
        recent = day.arrivals.get(zone, [])[-RECENT_MIN:] + day.handed_over.get(zone, [])[-RECENT_MIN:]
        arrived.add_metric([zone], sum(recent))
    labels = GaugeMetricFamily(
        "badge_printer_labels_left",
        "Labels left on a printer's roll: as it reports (source=printer) or estimated from badge-agent roll (roll).",
        labels=["printer", "source"],
    )
    per_hour = GaugeMetricFamily("badge_printer_prints_last_hour", "A printer's prints in the last 60 minutes.",
                                 labels=["printer"])  # fmt: skip
    fault = GaugeMetricFamily(
        "badge_printer_fault_age_seconds",
        "How long a printer has waited for a person (paused, down, dead or silent), absent when it does not.",
        labels=["printer"],
    )
    for p in day.printers:
        per_hour.add_metric([p.printer], p.per_hour)
        if p.labels_left is not None:
            labels.add_metric([p.printer, p.labels_source], p.labels_left)
        if p.fault_age_s is not None:
            fault.add_metric([p.printer], p.fault_age_s)
    return [waiting, rate, wait, arrived, labels, per_hour, fault]
