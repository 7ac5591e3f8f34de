"""grounding: normalization and quote finding (pure functions, property-tested)."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from research_engine.grounding import find_quote, normalize, normalize_with_map

text_st = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
plain_words = st.lists(st.from_regex(r"[A-Za-z0-9,.%$]{1,10}", fullmatch=True), min_size=1, max_size=40)


@given(text_st)
def test_normalize_is_idempotent(text):
    assert normalize(normalize(text)) == normalize(text)


@given(text_st)
def test_normalize_map_points_into_the_original(text):
    norm, origin = normalize_with_map(text)
    assert len(origin) == len(norm)
    assert all(0 <= i < len(text) for i in origin)
    assert origin == sorted(origin)


def test_normalize_unifies_quotes_dashes_spaces_and_invisibles():
    assert (
        normalize("  \u201cGrowth\u201d \u2014 it\u2019s   3\u00a0%\u00ad\n\tnow ")
        == '"Growth" - it\'s 3 % now'
    )


@given(st.data(), plain_words)
def test_every_substring_is_found_exactly(data, words):
    text = " ".join(words)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    assume(quote.strip())
    match = find_quote(quote, text)
    assert match.found and match.match == "exact" and match.score == 1.0
    assert text[match.start : match.end] == quote


@given(plain_words, st.data())
def test_reflowed_and_requoted_text_is_found_after_normalization(words, data):
    original = " ".join(words)
    separators = data.draw(
        st.lists(st.sampled_from([" ", "  ", "\n", " \t "]), min_size=len(words), max_size=len(words))
    )
    stored = "".join(w + s for w, s in zip(words, separators, strict=True))
    stored = "\u201c" + stored + "\u201d"
    match = find_quote('"' + original, stored)
    assert match.found
    assert normalize(stored[match.start : match.end]) == normalize('"' + original)


def test_curly_quote_in_source_matches_straight_quote_in_claim():
    stored = "The minister said it\u2019s \u201cthe largest programme\u201d\u2014ever."
    match = find_quote('it\'s "the largest programme"-ever', stored)
    assert match.found and match.match == "normalized"
    assert 0.5 < match.score < 1.0
    assert stored[match.start : match.end] == "it\u2019s \u201cthe largest programme\u201d\u2014ever"


def test_a_quote_with_one_changed_number_is_not_found_and_the_closest_window_is_shown():
    stored = "Intro.\n\nIn 2023 the programme reached 3.5 million households in 12 regions.\n\nOutro."
    match = find_quote("the programme reached 3.6 million households", stored)
    assert not match.found and match.match is None
    assert match.closest == "the programme reached 3.5 million households"
    assert 0.9 < match.score < 1.0


def test_case_is_kept_a_quote_must_be_verbatim():
    assert not find_quote("THE PROGRAMME", "the programme").found


def test_blank_quote_is_never_found():
    assert not find_quote("   ", "anything at all").found


@given(plain_words, plain_words)
@settings(max_examples=50)
def test_closest_window_is_a_slice_of_the_text_with_a_score_in_range(text_words, quote_words):
    text = " ".join(text_words)
    match = find_quote(" ".join(quote_words) + " zzz-not-there", text)
    assert not match.found
    assert 0.0 <= match.score <= 1.0
    if match.closest is not None:
        assert text[match.start : match.end] == match.closest


def test_closest_window_is_found_on_a_long_document():
    # Speed on long documents is measured by bench/grounding.py, not by a timer here.
    stored = " ".join(f"word{i % 997} filler text number {i}." for i in range(20000))  # ~600 kB
    match = find_quote("word5 filler text number 99999.", stored)
    assert not match.found
    assert match.closest and "filler text number" in match.closest


def test_spacing_around_inline_markup_is_not_a_difference_of_text():
    # Readers space inline markup differently: an older reader wrote PostgreSQL's entry term
    # "shared_buffers (<code>integer</code>)" as "( integer )"; a quote taken then still verifies now.
    page = "shared_buffers (integer) Sets the amount of memory the server uses for shared memory buffers."
    m = find_quote("shared_buffers ( integer ) Sets the amount of memory", page)
    assert (
        m.found and m.match == "normalized" and page[m.start : m.end].startswith("shared_buffers (integer)")
    )
    assert find_quote(
        "the server uses , for shared memory buffers .", "the server uses, for shared memory buffers."
    ).found
    # ... but words stay apart: a missing space between two words is still a different text.
    assert not find_quote("the amountof memory", page).found
