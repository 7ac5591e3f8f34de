"""trafilatura's passages are placed where they stand in the page (`extract.aligning`), whatever order it
wrote them in: a table nested in a cell comes out after the row holding it, and texts of the same words
("Json::Reader::Reader ( )" and "Json::Reader::~Reader ( )") must each find their own place."""

from __future__ import annotations

from research_engine.extract.aligning import in_page_order, kept_places
from research_engine.extract.blocks import Block


def page_of(texts: list[tuple[str, str]]) -> tuple[list[Block], str, list[int]]:
    """The page's blocks, its words, and where each block's words start in them."""
    blocks = [Block(kind, text) for kind, text in texts]
    said = " ".join(b.key for b in blocks)
    at, starts = 0, []
    for b in blocks:
        starts.append(said.find(b.key, at))
        at = starts[-1] + len(b.key)
    return blocks, said, starts


def test_rows_written_after_their_labels_are_placed_before_them_as_the_page_has_them():
    # Doxygen: each prototype is nested beside its labels; constructor and destructor have the same words.
    blocks, said, starts = page_of([
        ("heading", "Reader()"),
        ("table-row", "Json::Reader::Reader | ( | )"),
        ("paragraph", "default"),
        ("heading", "~Reader()"),
        ("table-row", "Json::Reader::~Reader | ( | )"),
        ("paragraph", "override default"),
        ("paragraph", "Read a document from the stream it is given."),
    ])  # fmt: skip
    kept = [blocks[2], blocks[1], blocks[5], blocks[4], blocks[6]]  # trafilatura: labels first
    places = kept_places(kept, said, blocks, starts)
    assert places == [starts[2], starts[1], starts[5], starts[4], starts[6]]
    ordered, _ = in_page_order(kept, places)
    assert [b.text for b in ordered] == [blocks[i].text for i in (1, 2, 4, 5, 6)]


def test_copies_of_a_repeated_row_take_their_places_in_order():
    rows = [("table-row", f"Yes | No | item {i % 3}") for i in range(300)]
    blocks, said, starts = page_of([("paragraph", "A table of answers follows here."), *rows])
    kept = [blocks[0], *blocks[1::2]]  # every other row kept
    places = kept_places(kept, said, blocks, starts)
    assert places == [starts[0], *starts[1::2]]


def test_a_passage_whose_words_are_nowhere_is_placed_after_the_one_before_it():
    blocks, said, starts = page_of(
        [("paragraph", "First paragraph of the page."), ("paragraph", "Second one.")]
    )
    stray = Block("paragraph", "Words the page never wrote in this order.")
    kept = [blocks[0], stray, blocks[1]]
    places = kept_places(kept, said, blocks, starts)
    assert places == [starts[0], -1, starts[1]]
    assert in_page_order(kept, places)[0] == kept


def test_a_long_table_of_repeated_rows_keeps_its_rows_in_order():
    # 2,000 rows of three texts: every copy a candidate for every place would make the chain quadratic.
    rows = [("table-row", f"Yes | No | item {i % 3}") for i in range(2000)]
    blocks, said, starts = page_of([("paragraph", "A table of answers follows here."), *rows])
    places = kept_places(blocks, said, blocks, starts)
    assert places == starts
