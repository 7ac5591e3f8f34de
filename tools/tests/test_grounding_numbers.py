"""grounding: numbers with scale words and units, compared by value (property-tested)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from research_engine.grounding import numbers_in, numbers_supported


def values(text):
    return [(n.value, n.unit) for n in numbers_in(text)]


def test_scale_words_units_and_currencies():
    assert values("$3.5 million, 12%, 7 per cent, 4.5 percentage points, US$2bn, 50k, 1.2 trillion") == [
        (3.5e6, "USD"),
        (12.0, "%"),
        (7.0, "%"),
        (4.5, "pp"),
        (2e9, "USD"),
        (50e3, None),
        (1.2e12, None),
    ]


def test_names_and_versions_are_not_numbers():
    assert values("COVID-19 hit the G20 while Python3 ran") == []
    assert values("Python 3.11.2") == [(3.11, None)]


def test_one_letter_scales_only_after_a_currency():
    assert values("a 5m wall") == [(5.0, None)]
    assert values("a $5m grant") == [(5e6, "USD")]


@given(st.integers(min_value=1000, max_value=10**12))
def test_thousands_separators_do_not_change_the_value(n):
    assert numbers_supported(f"it was {n:,}", f"it was {n}") == (True, [])
    assert numbers_supported(f"it was {n}", f"it was {n:,}") == (True, [])


@given(
    st.integers(min_value=1, max_value=999),
    st.integers(min_value=0, max_value=9),
    st.sampled_from([("thousand", 10**3), ("million", 10**6), ("billion", 10**9), ("trillion", 10**12)]),
)
def test_scale_words_equal_their_spelled_out_figures(whole, tenth, scale):
    word, factor = scale
    spelled = (whole * 10 + tenth) * factor // 10
    assert numbers_supported(f"{whole}.{tenth} {word} people", f"{spelled:,} people") == (True, [])


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=1, max_value=1000))
def test_a_different_number_is_reported_missing(n, delta):
    ok, missing = numbers_supported(f"sales rose to {n + delta}", f"sales rose to {n:,}")
    assert not ok and missing == [str(n + delta)]


def test_percent_spellings_agree_and_differ_from_other_units():
    assert numbers_supported("up 12%", "up 12 percent")[0]
    assert numbers_supported("up 12 per cent", "up 12%")[0]
    assert not numbers_supported("12 million", "12%")[0]


def test_a_table_figure_without_its_scale_word_supports_the_scaled_claim():
    assert numbers_supported("3.5 million households", "Households (millions): 3.5")[0]
    assert not numbers_supported("3.5 million households", "3.5 billion households")[0]


def test_claim_without_numbers_is_supported():
    assert numbers_supported("prices rose", "nothing numeric here") == (True, [])
