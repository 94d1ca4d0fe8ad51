"""Text templates over a job's fields: ``"{first_name} {last_name}"``, ``"{ticket_type}"``; ``{{`` is a brace.

Only plain field names are allowed: no attribute access, indexing or format specs, so a layout cannot reach into
anything but the job's own text.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass

_NAME = re.compile(r"[a-z0-9_]{1,40}")


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text and field names in turn."""

    parts: tuple[tuple[str, str | None], ...]  # (literal, field or None)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for _, f in self.parts if f is not None)

    def fill(self, values: Mapping[str, str], missing: set[str]) -> str:
        """The text with each field's value; a field the job does not have (or has empty) is added to ``missing``."""
        out: list[str] = []
        for literal, field in self.parts:
            out.append(literal)
            if field is not None:
                value = values.get(field, "")
                if not value.strip():
                    missing.add(field)
                out.append(value)
        return "".join(out)

    def all_empty(self, values: Mapping[str, str]) -> bool:
        """True when the template names fields and every one of them is empty for this job."""
        names = self.fields
        return bool(names) and not any(values.get(f, "").strip() for f in names)


def parse_template(text: str) -> Template:
    """Raises ValueError naming what is wrong (an unclosed brace, ``{name.upper}``, ``{name:>10}``)."""
    parts: list[tuple[str, str | None]] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"template {text!r}: {exc} (write {{{{ and }}}} for a literal brace)") from exc
    for literal, field, spec, conversion in parsed:
        if field is None:
            parts.append((literal, None))
            continue
        if spec or conversion or not _NAME.fullmatch(field):
            raise ValueError(f"template {text!r}: {{{field}}} is not a field name (lowercase letters, digits, _)")
        parts.append((literal, field))
    return Template(tuple(parts))
