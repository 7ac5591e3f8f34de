"""Word splitting and folding shared by the corpus ranker and the extractive model.

Owns one small rule set so that a query and the text it is matched against are cut the
same way: dotted version numbers stay one token ("3.11"), identifiers keep their
underscores ("run_until_complete"), and plain words get a light suffix fold
("threads", "threading" -> "thread"; "processes" -> "process"; "changed", "changes" ->
"chang"). It is deliberately not a full stemmer (Porter/Snowball would be a dependency
and over-conflates technical words); it never drops words: stop words are the caller's.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"\d+(?:\.\d+)+|[^\W_]+(?:_[^\W_]+)*", re.UNICODE)


def words(text: str) -> list[str]:
    """The lowercased words of `text`, in order (version numbers and identifiers whole)."""
    return WORD_RE.findall(text.lower())


def fold(word: str) -> str:
    """A light suffix fold of one lowercased word; numbers and identifiers come back unchanged."""
    if len(word) <= 3 or not word.isalpha():
        return word
    stripped = False
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("ency") and len(word) > 6:
        word = word[:-4] + "ent"  # concurrency -> concurrent
    elif word.endswith("ing") and len(word) >= 6:
        word, stripped = word[:-3], True
    elif word.endswith("ed") and len(word) >= 5:
        word, stripped = word[:-2], True
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if stripped and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # running -> runn -> run
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]  # schedule/scheduled/scheduling meet at "schedul"
    return word
