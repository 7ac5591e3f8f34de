"""Word splitting, folding and the stop-word list shared by the corpus ranker and the extractive model.

Owns one small rule set so that a query and the text it is matched against are cut the
same way: dotted version numbers stay one token ("3.11"), identifiers keep their
underscores ("run_until_complete"), and plain words get a light suffix fold
("threads", "threading" -> "thread"; "processes" -> "process"; "changed", "changes" ->
"chang"). It is deliberately not a full stemmer (Porter/Snowball would be a dependency
and over-conflates technical words). `words` never drops a word: `STOP_WORDS` is there
for callers that want to skip them (the extractive model, the API query builders).
`phrasal_compounds` gives the one word documentation writes for a hyphenated phrasal verb
("logged-in" -> "login"); `synonyms` and `other_words` the documentation's other words for a
question's ("restrict" -> "limit", "turn ... on" -> "enable", "how many" -> "number"), from a short list kept
by hand.
"""

from __future__ import annotations

import re
from functools import lru_cache

WORD_RE = re.compile(r"\d+(?:\.\d+)+|[^\W_]+(?:_[^\W_]+)*", re.UNICODE)

# Words that say nothing about what a question is about, so none may drive a query or a sentence
# match: function words, question words, the words the extractive model's own question templates
# add ("official documentation", "limitations", a situation's "given that"), and generic question
# vocabulary: a question asks about a topic's "effect" or "way", or how a "program" does its "work",
# but a sentence carrying only these words is not about the topic.
_FUNCTION_WORDS = """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me
more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves also may might must shall us via per
within across among regarding whether many much
don doesn didn isn aren wasn weren haven hasn hadn won wouldn shouldn couldn mustn needn
"""
_TEMPLATE_WORDS = """
evidence say says said state states stated source sources primary official documentation docs
doc find change changes changed recent recently current limitation limitations drawback
drawbacks exception exceptions counter critique critiques apply applies answer use used using
usage choose choosing chosen decide deciding pick select compare compared comparing comparison difference
differences versus vs better best right known know one given
"""
_GENERIC_WORDS = """
effect effects affect affects impact impacts way ways work works program programs programme
programmes role aspect aspects thing things matter matters happen happens really actually overall
get gets got getting
"""
STOP_WORDS = frozenset((_FUNCTION_WORDS + _TEMPLATE_WORDS + _GENERIC_WORDS).split())


def words(text: str) -> list[str]:
    """The lowercased words of `text`, in order (version numbers and identifiers whole)."""
    return WORD_RE.findall(text.lower())


# Words technical documentation uses for what a question asks in other words ("restrict a view" -> "limiting
# access"; "turn them on" -> "must be enabled"; "maximum size" -> "Upper Limit"; "a single table" -> "relation
# size"). A short list kept by hand: a general thesaurus (WordNet) lists senses technical text never means
# ("restrict": "confine", "throttle") and needs a data download.
_SYNONYM_GROUPS = (
    ("enable", "activate"),
    ("disable", "deactivate"),
    ("restrict", "limit"),
    ("maximum", "max", "limit"),
    ("minimum", "min"),
    ("remove", "delete", "drop"),
    ("table", "relation"),
)
# Phrases of a question and the word documentation writes for them: a verb and its particle, up to four
# words apart ("turn foreign key constraints on" -> enable), and "how many history lines" -> "the number of
# history events".
PHRASAL_VERBS = frozenset({"turn", "switch"})
_PHRASE_MEANING = (
    (re.compile(r"\b(?:turn|switch)\w*\s+(?:[\w-]+\s+){0,4}?on\b"), "enable"),
    (re.compile(r"\b(?:turn|switch)\w*\s+(?:[\w-]+\s+){0,4}?off\b"), "disable"),
    (re.compile(r"\bhow\s+many\b"), "number"),
)


def synonyms(terms: list[str] | set[str], text: str = "") -> set[str]:
    """The folded words documentation may use instead of `terms` (folded) or of the phrases in `text`
    ("turn foreign key constraints on" -> enabl, activat; "how many" -> number); none of `terms` itself."""
    meant = {fold(word) for pattern, word in _PHRASE_MEANING if pattern.search(text.lower())}
    found = set(terms) | meant
    return (meant | {other for term in found for other in _SYNONYMS.get(term, ())}) - set(terms)


def other_words(words_: list[str], text: str = "") -> list[str]:
    """The documentation's other words, as written, for `words_` (as written) and for the phrasal verbs
    in `text`: ["restrict"] -> ["limit"]; "How do I turn foreign key constraints on?" -> ["enable",
    "activate"]."""
    wanted = {fold(w) for w in words_} | {
        fold(word) for pattern, word in _PHRASE_MEANING if pattern.search(text.lower())
    }
    out = [
        other
        for group in _SYNONYM_GROUPS
        if any(fold(word) in wanted for word in group)
        for other in group
        if fold(other) not in {fold(w) for w in words_}
    ]
    return list(dict.fromkeys(out))


def _synonym_map() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for group in _SYNONYM_GROUPS:
        folded = {fold(word) for word in group}
        for term in folded:
            out.setdefault(term, set()).update(folded - {term})
    return {term: frozenset(others) for term, others in out.items()}


_PHRASAL_RE = re.compile(r"\b([a-z]{2,})-(in|out|up|on|off|down|back)\b")


def phrasal_compounds(text: str) -> list[str]:
    """The one word documentation writes for a hyphenated verb and particle: "logged-in" -> "login",
    "set-up" -> "setup", "built-in" -> "builtin" (the verb folded first). Only hyphenated pairs: "stored
    in" is a verb and a preposition far more often than a compound."""
    return [fold(verb) + particle for verb, particle in _PHRASAL_RE.findall(text.lower())]


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """A light suffix fold of one lowercased word; numbers and identifiers come back unchanged (cached: a
    page's sentences fold the same few thousand words over and over)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    stripped = False
    if word.endswith("ings") and len(word) >= 7:
        word = word[:-1]  # settings -> setting, then folded as the singular is (-> set)
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
    elif len(word) > 4 and word.endswith("y"):
        word = word[:-1] + "i"  # cookie/cookies (-> cooky) and query/queries meet at "cooki", "queri"
    return word


_SYNONYMS = _synonym_map()
