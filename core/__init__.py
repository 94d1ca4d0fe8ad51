"""What every layer above the drivers shares, and nothing about Redis or a printer.

``errors`` (the errors a user can cause, and the configuration exit code), ``logs`` (one structured line per event),
``validate`` and ``settings`` (strict YAML config sections, every problem named by field), ``exposition``
(Prometheus text for every /metrics) and ``page_headers`` (the headers of every page served).
"""
