"""The page reader on HTML: structure, stable passages, metadata, thin pages, fallbacks."""

from __future__ import annotations

import pytest

from research_engine.extract import THIN_CHARS, ExtractedPage, extract_html, normalize_date

BODY_SENTENCE = (
    "Researchers measured the throughput of three concurrency models under identical workloads and found "
    "that the differences depend mostly on how much time each task spends waiting for input and output. "
)

ARTICLE = f"""<!DOCTYPE html>
<html lang="en-GB">
<head>
  <title>Threads, processes and asyncio compared | Example News</title>
  <meta property="og:title" content="Threads, processes and asyncio compared">
  <link rel="canonical" href="/articles/concurrency">
  <meta property="article:published_time" content="2024-03-05T09:30:00Z">
  <meta property="article:modified_time" content="2024-03-07">
  <meta name="robots" content="noindex, follow">
</head>
<body>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/world">World</a></li></ul></nav>
  <article>
    <h1>Threads, processes and asyncio compared</h1>
    <p>{BODY_SENTENCE * 2}</p>
    <h2>How the measurements were made</h2>
    <p>{BODY_SENTENCE}Each benchmark ran five times on an otherwise idle machine.</p>
    <ul>
      <li>Threads were fastest for blocking network calls with modest concurrency.</li>
      <li>Processes won clearly on pure computation that holds the interpreter lock.</li>
      <li>Asyncio scaled best to many thousands of idle connections.</li>
    </ul>
    <table>
      <tr><th>model</th><th>requests per second</th></tr>
      <tr><td>threads</td><td>1200</td></tr>
      <tr><td>asyncio</td><td>4100</td></tr>
    </table>
    <pre><code>async def fetch(client, url):
    return await client.get(url)</code></pre>
    <p>{BODY_SENTENCE}The authors publish their scripts so that anyone can repeat the runs.</p>
  </article>
  <footer><p>Copyright Example News. All rights reserved.</p></footer>
</body>
</html>
"""


@pytest.fixture(scope="module")
def page() -> ExtractedPage:
    return extract_html(ARTICLE, url="https://news.example.com/2024/03/concurrency?ref=home")


def test_structure_keeps_headings_paragraphs_list_items_table_rows_and_code(page):
    kinds = [p.kind for p in page.passages]
    assert {"heading", "paragraph", "list-item", "table-row", "code"} <= set(kinds)
    items = [p.text for p in page.passages if p.kind == "list-item"]
    assert items[0].startswith("Threads were fastest") and len(items) == 3
    rows = [p.text for p in page.passages if p.kind == "table-row"]
    assert "threads | 1200" in rows
    assert any("async def fetch(client, url)" in p.text for p in page.passages if p.kind == "code")


def test_passages_are_numbered_in_document_order(page):
    assert [p.id for p in page.passages] == [f"p{i:02d}" for i in range(1, len(page.passages) + 1)]
    texts = [p.text for p in page.passages]
    assert texts.index("How the measurements were made") < next(
        i for i, t in enumerate(texts) if t.startswith("Threads were fastest")
    )


def test_same_bytes_give_the_same_passages():
    first = extract_html(ARTICLE.encode("utf-8"))
    second = extract_html(ARTICLE.encode("utf-8"))
    assert [p.to_dict() for p in first.passages] == [p.to_dict() for p in second.passages]


def test_navigation_and_footer_are_not_content(page):
    assert "Copyright Example News" not in page.text
    assert not any(p.text == "Home" for p in page.passages)


def test_leading_heading_that_repeats_the_title_is_metadata_not_body(page):
    assert page.title == "Threads, processes and asyncio compared"
    assert page.passages[0].text != page.title


def test_metadata_title_canonical_language_dates_robots(page):
    assert page.canonical_url == "https://news.example.com/articles/concurrency"
    assert page.language == "en-GB"
    assert page.published == "2024-03-05T09:30:00+00:00"
    assert page.modified == "2024-03-07"
    assert page.robots_meta == {"noindex": True, "nofollow": False}


def test_extraction_figures_name_the_extractor_and_count(page):
    figures = page.extraction_figures()
    assert figures["extractor"].startswith("trafilatura-") and figures["extractor"].endswith("+structure")
    assert figures["passages"] == len(page.passages)
    assert figures["chars"] == sum(len(p.text) for p in page.passages)
    assert figures["thin"] is False


def test_text_joins_passages_with_blank_lines(page):
    assert page.text == "\n\n".join(p.text for p in page.passages)


def test_dates_from_json_ld_when_no_meta_tags():
    html = ARTICLE.replace(
        '<meta property="article:published_time" content="2024-03-05T09:30:00Z">', ""
    ).replace(
        '<meta property="article:modified_time" content="2024-03-07">',
        '<script type="application/ld+json">{"@graph": [{"@type": "NewsArticle", '
        '"datePublished": "2023-11-02T08:00:00+01:00", "dateModified": "2023-11-03"}]}</script>',
    )
    page = extract_html(html)
    assert page.published == "2023-11-02T08:00:00+01:00"
    assert page.modified == "2023-11-03"


def test_date_from_time_element_when_nothing_else_states_it():
    html = ARTICLE.replace(
        '<meta property="article:published_time" content="2024-03-05T09:30:00Z">', ""
    ).replace("<h2>How", '<time datetime="2022-06-30">30 June 2022</time><h2>How')
    assert extract_html(html).published == "2022-06-30"


def test_page_that_states_no_dates_has_none():
    page = extract_html("<html><body><p>" + BODY_SENTENCE * 3 + "</p></body></html>")
    assert page.published is None and page.modified is None and page.title is None


@pytest.mark.parametrize(
    ("stated", "iso"),
    [
        ("2024-03-05T09:30:00Z", "2024-03-05T09:30:00+00:00"),
        ("2024-03-05 09:30:00", "2024-03-05T09:30:00"),
        ("2019/05/03", "2019-05-03"),
        ("2019-5-3", "2019-05-03"),
        ("Tue, 2019-02-30", None),
        ("yesterday", None),
    ],
)
def test_stated_dates_are_normalized_to_iso(stated, iso):
    assert normalize_date(stated) == iso


def test_robots_none_means_noindex_and_nofollow():
    html = ARTICLE.replace('content="noindex, follow"', 'content="NONE"')
    assert extract_html(html).robots_meta == {"noindex": True, "nofollow": True}


def test_short_page_is_thin_but_keeps_its_text():
    page = extract_html(
        "<html><head><title>Note</title></head><body><p>Closed for the holiday.</p></body></html>"
    )
    assert page.thin is True
    assert page.text == "Closed for the holiday."
    assert page.chars < THIN_CHARS


def test_page_trafilatura_rejects_still_gives_its_visible_blocks():
    # A bare list of short links is not an article; the reader still returns the blocks, marked thin.
    html = "<html><body><ul><li>alpha</li><li>beta</li></ul><script>var x = 1;</script></body></html>"
    page = extract_html(html)
    assert [p.text for p in page.passages] == ["alpha", "beta"]
    assert all(p.kind == "list-item" for p in page.passages)
    assert page.thin is True


@pytest.mark.parametrize("html", ["", "   ", "not html at all", "<html></html>", b"\xff\xfe\x00<"])
def test_degenerate_input_never_raises(html):
    page = extract_html(html)
    assert isinstance(page, ExtractedPage)
    assert page.thin is True


def test_bytes_with_declared_charset_are_decoded():
    html = (
        "<html><head><meta charset='iso-8859-1'></head><body><p>"
        + "Café crème à la française. " * 12
        + "</p></body></html>"
    ).encode("iso-8859-1")
    assert "Café crème à la française." in extract_html(html).text


def test_headings_that_head_nothing_are_dropped():
    html = ARTICLE.replace("</article>", "<h3>Related stories</h3><h3>More from Example News</h3></article>")
    texts = [p.text for p in extract_html(html).passages]
    assert "Related stories" not in texts and "More from Example News" not in texts
