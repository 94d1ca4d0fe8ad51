"""Check a mapping (a parsed YAML file) against a msgspec Struct type and report EVERY problem, each with its path.

msgspec stops at the first error; a venue engineer fixing a config on a laptop at 7 am wants the whole list at once.
So the mapping is walked here, struct by struct: unknown keys, missing fields, then each field converted on its own
with ``msgspec.convert`` (nested structs recursively), then the struct itself is built so that its ``__post_init__``
cross-field checks run and their ValueError is reported at the struct's path.

Two extensions, both carried in ``msgspec.Meta(extra=...)`` so the struct modules need nothing from here:

* ``Meta(extra={"before": fn})``: ``fn(raw)`` fixes up the raw value before it is converted (YAML's ``off`` read as
  false, USB ids written as hex strings);
* ``Meta(extra={"check": fn})``: ``fn(value)`` checks the converted value (a regex, a file that must exist) and
  returns it, possibly normalised; a ValueError is reported at the field's path with the value shown.

And one hook: a struct may define ``_check_given(self, given: frozenset[str]) -> None``, called with the keys the
mapping really had, for the rules that depend on what was written rather than on the values (an explicit ``url``
next to ``sentinel``; a serial field under a tcp printer).
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from core.logs import masked

S = TypeVar("S", bound=msgspec.Struct)

_EXPECTED = re.compile(r"Expected `([^`]*)`(?:, got `([^`]*)`| of length (<=|>=) (\S+)| (>=|>|<=|<) (\S+))?$")
_AT = re.compile(r" - at `\$(.*)`$")
_KIND = {
    "str": "text",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a mapping",
    "Path": "a file path",
}


class Invalid(ValueError):
    """The mapping does not fit the struct; ``problems`` lists every "field.path: what is wrong"."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def parse(tp: type[S], data: object) -> S:
    """Build ``tp`` from ``data`` with every check run. Raises Invalid listing all problems."""
    problems: list[str] = []
    result = _walk(tp, data, "", problems)
    if problems or result is None:
        raise Invalid(problems or ["(top level): not valid"])
    return result


def _dec_hook(tp: type, obj: object) -> object:
    # msgspec knows no pathlib.Path; config files name files as text.
    if tp is Path:
        if isinstance(obj, str):
            return Path(obj)
        raise ValueError("must be a file path")
    raise NotImplementedError


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _extras(tp: Any, key: str) -> list[Callable[[Any], Any]]:
    if typing.get_origin(tp) is not typing.Annotated:
        return []
    return [m.extra[key] for m in tp.__metadata__ if isinstance(m, msgspec.Meta) and m.extra and key in m.extra]


def _struct_in(tp: Any) -> type[msgspec.Struct] | None:
    """The Struct class of a field typed ``SomeStruct`` or ``SomeStruct | None`` (walked into), else None."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    candidates = typing.get_args(tp) if isinstance(tp, types.UnionType) else (tp,)
    return next((c for c in candidates if isinstance(c, type) and issubclass(c, msgspec.Struct)), None)


def _literals(tp: Any) -> list[Any]:
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) is typing.Literal:
        return list(typing.get_args(tp))
    return [v for arg in typing.get_args(tp) for v in _literals(arg)]


def _got(value: object, message: str = "") -> str:
    """`` (got 'x')`` for a scalar the message does not already show (nor an empty one), cut short if long."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or str(value) in message:
        return ""
    shown = repr(masked(value) if isinstance(value, str) else value)  # a URL's password is not quoted back
    return f" (got {shown[:60]}...)" if len(shown) > 64 else f" (got {shown})"


def plain(message: str, tp: Any) -> tuple[str, str]:
    """msgspec's message as (sub-path, plain English): "Expected `int` >= 1 - at `$[0]`" -> ("[0]", "must be >= 1")."""
    where = _AT.search(message)
    sub = where.group(1) if where else ""
    message = message[: where.start()] if where else message
    if message.startswith("Invalid enum value"):
        return sub, "must be one of " + ", ".join(str(v) for v in _literals(tp))
    match = _EXPECTED.match(message)
    if match is None:
        return sub, message  # a check's own message, or one msgspec adds later: shown as it is
    expected, _, length_op, length, op, bound = match.groups()  # "got `bool`" says less than the value shown
    kind = expected.split(" | ")[0]
    if length_op == "<=":
        unit = "characters" if kind == "str" else "entries"
        return sub, f"must be at most {length} {unit}"
    if length_op == ">=":
        if length == "1":
            return sub, "must not be empty"
        return sub, f"must be at least {length} {'characters' if kind == 'str' else 'entries'}"
    if op:
        number = float(bound)  # msgspec writes a float field's bound as 0.0: "must be > 0" reads better
        return sub, f"must be {op} {int(number) if number.is_integer() else bound}"
    return sub, f"must be {_KIND.get(kind, kind)}"


def _field(tp: Any, value: object, path: str, problems: list[str]) -> tuple[bool, Any]:
    """One field converted and checked on its own: (ok, value)."""
    try:
        for before in _extras(tp, "before"):
            value = before(value)
    except ValueError as exc:
        problems.append(f"{path}: {exc}")
        return False, None
    struct = _struct_in(tp)
    if struct is not None and isinstance(value, Mapping):
        converted = _walk(struct, value, path, problems)
        return converted is not None, converted
    try:
        converted = msgspec.convert(value, tp, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        sub, message = plain(str(exc), tp)
        problems.append(f"{path}{sub}: {message}{'' if sub else _got(value)}")
        return False, None
    try:
        for check in _extras(tp, "check"):
            converted = check(converted)
    except ValueError as exc:
        problems.append(f"{path}: {exc}{_got(value, str(exc))}")
        return False, None
    return True, converted


def _walk(tp: type[S], data: object, path: str, problems: list[str]) -> S | None:
    where = path or "(top level)"
    if not isinstance(data, Mapping):
        problems.append(f"{where}: must be a mapping{_got(data)}")
        return None
    before = len(problems)
    fields = msgspec.structs.fields(tp)
    known = [f.encode_name for f in fields]
    if tp.__struct_config__.forbid_unknown_fields:
        for key in data:
            if key not in known:
                problems.append(f"{_join(path, str(key))}: unknown field{_hint(str(key), known)}")
    values: dict[str, Any] = {}
    for field in fields:
        field_path = _join(path, field.encode_name)
        if field.encode_name not in data:
            if field.required:
                problems.append(f"{field_path}: required field is missing")
            continue
        ok, value = _field(field.type, data[field.encode_name], field_path, problems)
        if ok:
            values[field.name] = value
    if len(problems) > before:
        return None  # cross-field checks on a struct with a bad field would only add noise
    try:
        result = tp(**values)  # runs __post_init__
        check_given = getattr(result, "_check_given", None)
        if check_given is not None:
            check_given(frozenset(str(k) for k in data))
    except (ValueError, TypeError) as exc:
        problems.append(f"{where}: {exc}")
        return None
    return result


def _hint(key: str, known: list[str]) -> str:
    import difflib  # only a config with mistakes needs "did you mean"; the daemon's start-up does not

    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f" (known: {', '.join(known)})" if known else ""
