"""The embedded extractive model: judgement by rule, claims by a fitted sentence ranking, no LLM and no key.

- decompose (`plan`): the objective split into its facets (clauses joined by "and", ";", "?";
  enumerations such as "threads, processes and asyncio" or "X vs Y" become one short
  question per entity), then the missing search angles (time window, source type, and
  counter-argument only when the objective weighs something) phrased with the main
  facet's topic as an object ("of how SQLite lets readers ..."), never the whole objective;
  at most MAX_SUB_QUESTIONS, each with a claim type from the brief ("quantitative", when
  allowed, for a question asking for a figure: it is what sends the loop to the data APIs);
- queries (`targets`): the sub-question's key terms (focus terms first, a few words) plus
  the angle's words;
- select_judgement (`targets`): which of the sub-question's subject words (`Target.focus`)
  a candidate's title and snippet carry: none -> verdict hint "reject", all -> "choose",
  some -> no hint (the facts decide); API candidates (OpenAlex works, World Bank series)
  are judged the same way on their titles;
- consolidate (`candidates`, `examples`, `features`, `ranker`, `picking`, `series`): candidate sentences of
  the fetched passages (fragments, code, navigation, headings filtered out by `text`), and the
  runs of text a reference page states a finding in (an entry's term with its lines, a
  sentence with its antecedents, a list item with the sentence announcing it, a table row);
  each read against the sub-question (`features`: BM25, the answer score, the headings above
  it, its place, release notes, versions, the kind of answer asked for) and scored by a linear
  ranking fitted on the labelled dev set (`ranker`, weights in `sentence_ranker.json`, card in
  `sentence_ranker.md`); answering sentences first, then `picking.RULES` say which become claims
  (about the subject, a whole answer for a lookup, no repeats, at most `max_claims` (five),
  all from one source if it holds them, the fourth and fifth from pages the first three came from); for a
  quantitative sub-question, data-series points first (a World Bank passage such as
  "Japan, GDP (current US$), 2019: 5081769542379.77" is its own claim text and quote, so
  no number is ever reworded): per series the latest non-null point and, for the time
  angle, the earliest one in the recency window (ten years for "any"), each owned by one
  sub-question (`series.data_owner`);
- verify (`model`): the mechanical floor, with its reasons;
- critic (`model`): every sub-question without a supported claim is a material gap;
- write (`rendering`): "Answer" (the claims that best answer the objective's facets, never a
  fragment or a sentence about the page), "Key findings" (one cited bullet per sub-question),
  the claims that answer each sub-question, then the marked caveat section naming gaps,
  refused claims and what was left out.

Modules, lowest first: `text` (words and sentences; the stop words are `terms.STOP_WORDS`),
`plan`, `targets`, `examples`, `candidates`, `features`, `ranker`, `picking` and `series`, `rendering`, and
`model` (`ExtractiveModel`, which ties them together). The model is stateless (a pure function
of its inputs and the shipped weights): a resumed or replayed run makes exactly the same
choices as an uninterrupted one. Nothing here does I/O but reading the weights, or can invent
text: every claim is one run of a source's text.
"""

from __future__ import annotations

from research_engine.engine.extractive.features import bm25_scores
from research_engine.engine.extractive.model import ExtractiveModel
from research_engine.engine.extractive.plan import MAX_SUB_QUESTIONS, Facet, facets_of, plan_of
from research_engine.engine.extractive.rendering import (
    ABOUT_HEADING,
    CAVEAT_HEADING,
    KEY_FINDINGS_HEADING,
    render_report,
)
from research_engine.engine.extractive.series import MAX_DATA_CLAIMS, SeriesPoint, series_points
from research_engine.engine.extractive.text import is_claim_sentence, key_terms, near_key, sentences, tokens
from research_engine.ranking import idf_table
from research_engine.terms import STOP_WORDS  # its old home: `engine.apigather` still imports it from here

__all__ = [
    "ABOUT_HEADING",
    "CAVEAT_HEADING",
    "KEY_FINDINGS_HEADING",
    "MAX_DATA_CLAIMS",
    "MAX_SUB_QUESTIONS",
    "STOP_WORDS",
    "ExtractiveModel",
    "Facet",
    "SeriesPoint",
    "bm25_scores",
    "facets_of",
    "idf_table",
    "is_claim_sentence",
    "key_terms",
    "near_key",
    "plan_of",
    "render_report",
    "sentences",
    "series_points",
    "tokens",
]
