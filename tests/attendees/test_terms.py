"""The search's normalisation: what a help desk types finds what the list holds, in any script."""

from __future__ import annotations

from attendees.terms import MAX_TERMS, fold, index_terms, query_words


def _finds(query: str, name: str, company: str = "", order: str = "", email: str = "") -> bool:
    """As attendee_search.lua matches: a word is a prefix of a word term, or an order code (``#``) or e-mail (``=``)
    whole."""
    terms = index_terms(name, company, order, email)
    words = [t for t in terms if t[0] not in "#="]
    return all(any(t.startswith(w) for t in words) or f"#{w}" in terms or f"={w}" in terms for w in query_words(query))


def test_case_and_accents_are_ignored_and_any_words_prefix_matches() -> None:
    assert fold("Renée Lefèvre") == "renee lefevre"
    assert _finds("renee lef", "Renée Lefèvre")
    assert _finds("LEFEV", "Renée Lefèvre")
    assert not _finds("renee x", "Renée Lefèvre")
    assert _finds("strasse", "Hans Straße")  # ß folds to ss


def test_greek_cyrillic_and_arabic_words_by_their_prefix() -> None:
    assert _finds("δημ", "Δημήτρης Παπαδόπουλος")
    assert _finds("παπαδο", "Δημήτρης Παπαδόπουλος")
    assert _finds("алекс", "Александр Пушкин")
    assert _finds("محم", "محمد علي")


def test_unspaced_scripts_are_found_by_any_part() -> None:
    assert _finds("李", "李小龍")
    assert _finds("小龍", "李小龍")
    assert _finds("龍", "李小龍")
    assert _finds("やま", "やまだ たろう")
    assert not _finds("王", "李小龍")


def test_order_code_and_email_are_whole_terms() -> None:
    assert _finds("abc12", "Ada", order="ABC12")
    assert _finds("ada@example.org", "Ada", email="Ada@Example.org")
    assert not _finds("abc", "Ada", order="ABC12")  # an order code is typed whole


def test_the_terms_of_one_attendee_are_bounded() -> None:
    long_name = " ".join(f"word{i}" for i in range(50))
    assert len(index_terms(long_name, "Company " * 20, "ORDER", "a@b.c")) == MAX_TERMS
    assert len(index_terms("李" * 200, "", "", "")) <= MAX_TERMS


def test_a_query_of_any_bytes_is_harmless() -> None:
    assert query_words("\x00\ud800 [*?] \\ ") == []
    assert query_words("\xff") == ["y"]  # ÿ, folded
    assert query_words("a" * 10_000)[0] == "a" * 24


def test_latin_letters_that_do_not_decompose_are_found_as_people_type_them() -> None:
    assert _finds("orjan", "Ørjan Nilsen")
    assert _finds("lukasz", "Łukasz Żółć")
    assert _finds("zolc", "Łukasz Żółć")
    assert _finds("yilmaz", "Ayşe Yılmaz")
    assert _finds("dord", "Đorđe Balašević")
    assert _finds("aeroe", "Ærøe Hansen")
    assert _finds("strasse", "Hans Straße")
    assert _finds("ØRJAN", "Ørjan Nilsen")  # the letter itself too: index and query fold the same way
    assert fold("Łódź Ærø") == "lodz aero"
    assert _finds("δημ", "Δημήτρης") and not _finds("dim", "Δημήτρης")  # other scripts stay in their script


def test_a_query_folded_the_old_way_matches_terms_indexed_before_the_transliteration() -> None:
    assert query_words("Ørjan Łukasz", legacy=True) == ["ørjan", "łukasz"]
    assert query_words("Ørjan Łukasz") == ["orjan", "lukasz"]
    assert query_words("renee", legacy=True) == query_words("renee")
