"""The words an attendee is found by, and the words of a search: the same normalisation on both sides.

A help desk types what it hears: ``renee lef`` must find "Renée Lefèvre", ``δημ`` "Δημήτρης", ``李`` "李小龍". So
text is decomposed (NFKD), its combining marks dropped (é -> e, ή -> η) and case-folded (Δ -> δ, ß -> ss), then cut
into words at anything that is not a letter or digit. A Latin letter that does not decompose (Ø, Ł, ı, Đ, Æ)
is then written as people type it without the key for it (o, l, i, d, ae), from anyascii's table: ``orjan`` finds
"Ørjan", ``lukasz`` "Łukasz", ``yilmaz`` "Yılmaz". Only Latin letters: Greek, Cyrillic and the rest stay in their
script (``δημ`` finds "Δημήτρης", and a desk that types Greek is not made to spell it in Latin letters).

Scripts written without spaces between words (Chinese, Japanese kana and kanji, Thai, ...) are indexed from every
character on (each suffix, up to a few characters), so a search for any part of such a name finds it by prefix. An
order code and an e-mail address are whole terms.

A list indexed before Latin letters were transliterated holds terms such as ``ørjan``: ``query_words(...,
legacy=True)`` gives a search's words folded that way, and the search looks for both, so such a list is still found
as it was (by "Ørjan"); an import of it again writes the new terms (``orjan`` then finds it too).

Each distinct word is kept once in a sorted set searched with ZRANGEBYLEX (attendees/prelude.lua), so a search
costs a range read of its longest word and a look at that word's attendees' terms for the others
(attendee_search.lua), not a scan of the list; an order code or an e-mail is found whole. The number of terms
an attendee adds is bounded (``MAX_TERMS``): the index's memory is too.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from anyascii import anyascii

#: At most this many index entries per attendee (name, company, order code, e-mail together).
MAX_TERMS = 16
#: Characters of a term kept (a word longer than this is found by its first 24 characters).
MAX_TERM_CHARS = 24
#: Characters of an unspaced run indexed from each position on (``李小龍`` -> 李小龍, 小龍, 龍).
UNSPACED_SUFFIX = 4
#: At most this many words of a search are used (the rest narrows nothing a desk needs).
MAX_QUERY_WORDS = 4

_WORD = re.compile(r"\w+")
#: Scripts written without spaces between words: Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Hangul is
#: spaced but syllables are searched by their start, so it is not here.
_UNSPACED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f"
    "\U00020000-\U0002ffff]+"
)


def fold(text: str, legacy: bool = False) -> str:
    """Decomposed, without combining marks, case-folded, Latin letters in ASCII: ``Renée`` -> ``renee``, ``Ørjan``
    -> ``orjan``, ``Δημήτρης`` -> ``δημητρης``. ``legacy``: without the last step (the terms of a list indexed before
    it, which a search still looks for)."""
    if text.isascii():  # most names: nothing to decompose (and a tenth of the time)
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    folded = unicodedata.normalize("NFC", stripped.casefold())
    if legacy or folded.isascii():
        return folded
    return "".join(ch if ch.isascii() else _latin(ch) for ch in folded)


@lru_cache(maxsize=4096)
def _latin(ch: str) -> str:
    """A Latin letter left after decomposing (ø, ł, ı, đ, æ, þ) as typed in ASCII; any other character as it is."""
    if not unicodedata.name(ch, "").startswith("LATIN "):
        return ch
    ascii_text = anyascii(ch).casefold()
    return ascii_text if ascii_text.isalnum() else ch


def words(text: str) -> list[str]:
    """The words of ``text`` as the index holds them (unspaced runs as their suffixes), in order, once each."""
    out: list[str] = []
    for word in _WORD.findall(fold(text)):
        pieces = [word]
        unspaced = _UNSPACED.search(word)
        if unspaced is not None:
            # Split into the spaced parts and the unspaced run's suffixes: "abc李小龍" -> abc, 李小龍, 小龍, 龍.
            pieces = [p for p in _UNSPACED.split(word) if p]
            for run in _UNSPACED.findall(word):
                pieces += [run[i : i + UNSPACED_SUFFIX] for i in range(len(run))]
        for piece in pieces:
            term = piece[:MAX_TERM_CHARS]
            if term not in out:
                out.append(term)
    return out


def index_terms(name: str, company: str, order_code: str, email: str) -> list[str]:
    """The terms one attendee is indexed under: the name's words first (kept when the bound cuts), then the order
    code (``#abc12``) and the e-mail (``=ada@example.org``), found whole, then the company's words."""
    terms = words(name)
    for mark, whole in (("#", order_code), ("=", email)):
        term = fold(whole.strip())[: MAX_TERM_CHARS * 2]
        if term and not any(ch.isspace() for ch in term):
            terms.append(mark + term)
    for word in words(company):
        if word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


def query_words(query: str, legacy: bool = False) -> list[str]:
    """The prefixes a search looks for: its words folded as the index's, an e-mail or order code kept whole.
    ``legacy``: folded as a list indexed before Latin letters were transliterated holds them (``fold``).

    Each must match the start of one of an attendee's terms, or be their order code or e-mail. An unspaced run is
    searched as typed (the index holds each of its suffixes, so a part of a name is the prefix of one).
    """
    found: list[str] = []
    for token in query.split():
        folded = fold(token, legacy)
        if "@" in folded:
            found.append(folded[: MAX_TERM_CHARS * 2])
            continue
        for word in _WORD.findall(folded):
            spaced = [(p, MAX_TERM_CHARS) for p in _UNSPACED.split(word) if p]
            for piece, limit in spaced + [(run, UNSPACED_SUFFIX) for run in _UNSPACED.findall(word)]:
                prefix = piece[:limit]
                if prefix not in found:
                    found.append(prefix)
    return found[:MAX_QUERY_WORDS]
