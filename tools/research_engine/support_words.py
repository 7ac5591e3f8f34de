"""The words the sentence-support check (`support`) reads, and how a text becomes its tokens and stems.

Closed lists, each with why it is what it is: stop words (`terms`' and the framing words a writer adds),
the words a negation passes over, negations and restrictions, the groups of absolutes, superlatives and
guarantees, causal connectives (a claim's side read more leniently than a sentence's), number words, and
the past forms Snowball's English stemmer leaves apart from their verb; two tables derived from WordNet 3.0
(package data, read on first use): the forms derived from a common word and the common words themselves.
Then what the checks ask of words: a word's forms, a sentence's content words, a word's negative forms, and
a term swapped for a claim's. `stem` is cached: a deliverable repeats its words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from research_engine import libraries, terms

SCOPE_WORDS = 4  # the words a negation or "only" governs, up to a clause boundary

EXTRA_STOP = """
let lets letting make makes made making get gets got getting give gives gave given take takes took taken
like also even just rather instead example e.g eg i.e ie etc note notes noted according documentation docs
manual page explains explained describes described mention mentions mentioned thing things whereas whose
yes its it's they're there's that's isn't aren't doesn't don't can't won't short simply put basically
essentially namely specifically particular particularly generally summary instance addition additionally
furthermore moreover mean means meaning able
although though since whether except besides beside despite upon via per regarding concerning something
anything someone anyone somewhere anywhere accordingly otherwise likewise nonetheless nevertheless anyway
"""  # a writer's framing and discourse words, and the closed-class words that join what a sentence says
# (conjunctions, prepositions, indefinite pronouns, linking adverbs): they say how, not what
STOP = terms.STOP_WORDS | frozenset(EXTRA_STOP.split())
# Words a negation or "only" passes over to reach what it governs.
SCOPE_SKIP_TEXT = """
a an the be is are was were been being am do does did have has had can could will would shall should may
might must it its this that these those they them their there to of for in on at by with from as any some
ever yet also even actually really always still currently necessarily generally usually typically normally
often attempt attempts try tries possible able allowed way ways
"""  # "has no way to fetch it" negates "fetch"
SCOPE_SKIP = frozenset(SCOPE_SKIP_TEXT.split())
NEGATIONS = frozenset(
    {"not", "no", "never", "without", "none", "nothing", "neither", "nor", "no_longer", "instead_of",
     "rather_than", "unable", "unlikely", "lack", "lacks", "lacking", "unless"}
)  # fmt: skip
# Verbs that state a negation of what they govern ("avoiding reloads" is "no reload"): a claim's agree with
# a sentence's "not" on the same words; a sentence's are words like any other.
NEGATING_VERBS_TEXT = """
avoid avoids avoided avoiding prevent prevents prevented preventing omit omits omitted omitting skip skips
skipped skipping ignore ignores ignored ignoring refuse refuses refused refusing forbid forbids forbidden
forbidding disallow disallows disallowed disallowing stop stops stopped stopping
"""
# Verbs that negate only what a "from" leads to ("keeping the object from being mutated").
FROM_NEGATING_VERBS = frozenset({"keep", "keeps", "kept", "keeping"})
NEGATING_VERBS = frozenset(NEGATING_VERBS_TEXT.split()) | FROM_NEGATING_VERBS
# Words that put things in order: with them, a sentence's "only" says when, which a claim's order holds.
ORDER_WORDS = frozenset({"first", "then", "after", "afterwards", "before", "once", "later", "until", "next"})
ONLY = frozenset({"only", "solely", "exclusively", "sole", "at_most"})
BOUND_WORDS = frozenset(
    {"maximum", "max", "limit", "limits", "limited", "upper"}
)  # a claim's bound: "at most"
MULTIWORD = (
    (re.compile(r"\bnot only\b|\bor not\b|\bno matter\b"), " "),  # additive or concessive: no negation
    (re.compile(r"\bas well(?: as)?\b"), " also "),  # "as well as" adds: no "well" asserted
    (
        re.compile(r"\b(do|does|did|doing|done) so\b"),
        r"\1",
    ),  # "will not do so by default": no clause boundary
    (re.compile(r"\bnothing (?:more|else) than\b|\bnothing but\b"), "only"),  # a restriction in other words
    (re.compile(r"\((un|re|de|dis|non)\)([a-z]{3,})\b"), r"\2 \1\2"),  # "(un)setting": both words
    # "as NA unless the na argument says otherwise" is a default the argument changes, not a negation
    (
        re.compile(
            r"\bunless\b([^,.;:]{1,40}?)\b(?:says?|said|specif\w*|states?|indicate\w*|sets?) otherwise\b"
        ),
        r"by default, \1 change",
    ),
    (re.compile(r"\bno longer\b"), "no_longer"),
    (re.compile(r"\b(?:instead of|in place of|an alternative to)\b"), "instead_of"),
    (re.compile(r"\bat most\b"), "at_most"),
    (re.compile(r"\bat least\b"), "at_least"),
    (re.compile(r"\brather than\b"), "rather_than"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bwon['’]t\b"), "will not"),
    (re.compile(r"\bcan['’]t\b"), "can not"),
    (re.compile(r"n['’]t\b"), " not"),
)
BOUNDARY_TEXT = "but however although though whereas while because so unless if when which who whom where"
BOUNDARY_WORDS = frozenset(BOUNDARY_TEXT.split())
TOKEN_RE = re.compile(r"[a-z0-9_]+(?:[.'’][a-z0-9_]+)*|[,;:()\u2013\u2014!?]|\.(?=\s|$)")
# Absolutes, superlatives and guarantees: a sentence may use one only where a cited claim uses it or a word
# of its group (universal quantifiers are one group, as are "must"/"required" and "guarantee"/"ensure").
STRONG_GROUPS = (
    "all every each everything everyone everybody entire whole whatsoever",
    "entirely wholly completely fully totally",
    "always invariably",
    "never",
    "must required requires mandatory",
    "guarantee guarantees guaranteed guaranteeing ensure ensures ensured",
    "certainly definitely undoubtedly",
    "impossible",
    "universally",
    "forever",
    "most", "least", "best", "worst", "fastest", "slowest", "safest", "simplest", "easiest", "quickest",
    "cheapest", "largest", "smallest", "biggest", "highest", "lowest", "greatest", "strongest", "weakest",
    "optimal", "perfect perfectly",
)  # fmt: skip
# Degree adverbs ("completely replaced") are a group of their own: a claim's quantifier ("whole
# projects") backs none of them.
STRENGTH_GROUP = {word: group.split()[0] for group in STRONG_GROUPS for word in group.split()}
# The words of a group only a claim's side may use ("each" and "required" state no strength in a sentence).
STRONG_WORDS = frozenset(STRENGTH_GROUP) - {"each", "whole", "entire", "required", "requires", "ensure",
                                             "ensures", "ensured"}  # fmt: skip
# What a claim says in other words that lets a sentence use a strong word: an obligation ("have to" is
# "must"), a bound (a "maximum" is the largest value, a "minimum" the smallest) and a majority ("the
# majority of" is "most").
CLAIM_STRENGTH = (
    (re.compile(r"\b(?:the|a) (?:vast |great )?majority of\b", re.I), ("most",)),
    (re.compile(r"\b(?:ha(?:ve|s|d) to|needs? to)\b", re.I), ("must",)),
    (re.compile(r"\b(?:maximum|max)\b", re.I), ("largest", "highest", "biggest", "greatest")),
    (re.compile(r"\b(?:minimum|min)\b", re.I), ("smallest", "lowest")),
)
# A concession that spans every case ("whatever its size", "no matter how large", "regardless of DNSSEC")
# says "for all": a sentence may make one only where a claim makes one or uses a word of the "all" group.
UNIVERSAL_CONCESSION_RE = re.compile(
    r"\b(?:no matter (?:what|how|which|where|when|who)|what(?:so)?ever (?:its|their|the|his|her|your|our)"
    r"|regardless of|irrespective of)\b",
    re.IGNORECASE,
)
# Idioms that carry a strong word without its strength ("above all" is "most importantly", "after all" is
# "as it is").
STRENGTH_IDIOM_RE = re.compile(r"\b(?:above all|after all|all in all|first of all|at all)\b", re.IGNORECASE)
CAUSAL_RE = re.compile(
    r"\b(?:because|therefore|thus|hence|consequently|so that|so as to|in order to|as a result|due to(?! be\b)"
    r"|thanks to|leads? to|results? in|causes?|caused|which is why|that is why|thereby)\b|,\s*so\b"
)
# A claim that says one thing lets or allows another makes the link a sentence's "so" or "because" states;
# so does one that states a purpose ("the design goal is", "intended to") or a consequence ("otherwise").
CLAIM_CAUSAL_RE = re.compile(
    CAUSAL_RE.pattern + r"|\b(?:allowing|allows|enables|enabling|lets|since|why|reason|thereby)\b"
    r"|\b(?:ensur\w*|avoid\w*|prevent\w*|in that case|as (?:it|they|this|these|there|we)"
    r"|if|(?:this|which|that) means|meaning|otherwise"
    r"|goals?|purposes?|aims? (?:to|at|of)|intended|designed (?:to|for|so)|the idea is)\b"
    r"|(?<!such )(?<!as )\bas\s+(?:[\w(),-]+\s+){1,12}?"  # "as defaults in the future might change"
    r"(?:might|may|will|would|can|could|should|must|is|are|was|were|has|have|does|do)\b"
)  # a claim's "since" may be temporal: read leniently, it only lets a sentence say "because"
NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")
# Counts from two up ("one" is a pronoun more often than a count: it is left out).
COUNTS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
)
TENS = "- - - thirty forty fifty sixty seventy eighty ninety"
# A multiple states a figure too ("doubles the capacity").
MULTIPLES = (
    ("double doubles doubled doubling twice", 2.0),
    ("triple triples tripled thrice", 3.0),
    ("half halves halved halving", 0.5),
)
# Ordinals from the third up state a figure too ("the third argument" against "the second argument");
# "second" is a unit of time and "a second time" as often (measured: it refused a faithful sentence).
ORDINALS = "- - - third fourth fifth sixth seventh eighth ninth tenth"
NUMBER_WORDS = (
    {w: float(n) for n, w in enumerate(COUNTS.split()) if n >= 2}
    | {w: float(n) for n, w in enumerate(ORDINALS.split()) if w != "-"}
    | {w: float(10 * n) for n, w in enumerate(TENS.split()) if n >= 3}
    | {w: value for words, value in MULTIPLES for w in words.split()}
)
NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.I)
# Past forms the stemmer leaves apart from their verb.
IRREGULAR = {
    "wrote": "write", "written": "write", "ran": "run", "began": "begin", "begun": "begin", "built": "build",
    "kept": "keep", "held": "hold", "found": "find", "sent": "send", "spent": "spend", "led": "lead",
    "chose": "choose", "chosen": "choose", "broke": "break", "broken": "break", "known": "know",
    "knew": "know", "shown": "show", "saw": "see", "seen": "see", "went": "go", "gone": "go", "lost": "lose",
    "met": "meet", "paid": "pay", "read": "read", "stood": "stand", "told": "tell", "thought": "think",
    "brought": "bring", "bought": "buy", "caught": "catch", "fell": "fall", "fallen": "fall", "felt": "feel",
    "grew": "grow", "grown": "grow", "hid": "hide", "hidden": "hide", "left": "leave", "meant": "mean",
    "rose": "rise", "risen": "rise", "ridden": "ride", "sold": "sell", "stuck": "stick", "struck": "strike",
    "taught": "teach", "threw": "throw", "thrown": "throw", "understood": "understand", "woke": "wake",
    "wore": "wear", "won": "win", "wound": "wind", "forbade": "forbid", "forbidden": "forbid",
    "overrode": "override", "overridden": "override", "rewrote": "rewrite", "rewritten": "rewrite",
}  # fmt: skip


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """One lowercased word as compared: irregular past forms to their verb, then Snowball (Porter2) English,
    a British spelling then folded into the American one ("behaviour" is "behavior"). Identifiers and
    numbers come back unchanged."""
    s = raw_stem(word)
    return _spelling_variants().get(s, s)


def raw_stem(word: str) -> str:
    """`stem` before the spelling is folded (the word tables are built from it)."""
    if not word.isalpha():
        return word
    return str(_stemmer().stemWord(IRREGULAR.get(word, word)))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return libraries.snowballstemmer().stemmer("english")


# British spellings WordNet 3.0 lists beside the American ones, as stems (tools/build_word_tables.py).
SPELLING_VARIANTS_FILE = Path(__file__).with_name("support_spelling_variants.txt")


@lru_cache(maxsize=1)
def _spelling_variants() -> dict[str, str]:
    lines = SPELLING_VARIANTS_FILE.read_text(encoding="utf-8").splitlines()
    return dict(line.split() for line in lines if line and not line.startswith("#"))


# The words WordNet 3.0 derives from a common word in its common sense ("verification" from "verify"):
# tools/build_word_tables.py says how; the file's header carries WordNet's licence.
DERIVED_WORDS_FILE = Path(__file__).with_name("support_derived_words.txt")


def derived_stems(word_stem: str) -> frozenset[str]:
    """The stems of the words derived from a stem's word (none for most words); read when first asked."""
    return _derived_table().get(word_stem, frozenset())


def _stem_table(path: Path) -> dict[str, set[str]]:
    """A word table as tools/build_word_tables.py writes it: a stem, then its related stems, a line each."""
    table: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        word_stem, *others = line.split()
        table.setdefault(word_stem, set()).update(others)
    return table


@lru_cache(maxsize=1)
def _derived_table() -> dict[str, frozenset[str]]:
    return {s: frozenset(others) for s, others in _stem_table(DERIVED_WORDS_FILE).items()}


# Each word's antonyms in WordNet 3.0 ("enable"/"disable", "required"/"optional"), as stems: a sentence
# that puts one where its claims write the other contradicts them. tools/build_word_tables.py says how.
ANTONYM_WORDS_FILE = Path(__file__).with_name("support_antonym_words.txt")
# Directions WordNet leaves out (prepositions and comparatives): the same kind of opposite.
DIRECTION_PAIRS = (
    ("before", "after"), ("earlier", "later"), ("previous", "next"), ("preceding", "following"),
    ("above", "below"), ("upper", "lower"), ("higher", "lower"), ("more", "fewer"), ("more", "less"),
    ("larger", "smaller"), ("maximum", "minimum"), ("at_least", "at_most"), ("older", "newer"),
    ("still", "no_longer"),
)  # fmt: skip

DIRECTION_WORDS = frozenset(w for pair in DIRECTION_PAIRS for w in pair)
# One against more than one, said of the same thing ("several callbacks" where a claim allows "a single
# callback"): WordNet pairs only "single" and "multiple".
QUANTITY_GROUPS = (frozenset({"several", "multiple", "many"}), frozenset({"single", "one"}))


def antonym_stems(word_stem: str) -> frozenset[str]:
    """The stems of a stem's antonyms (none for most words); the table is read when first asked."""
    return _antonym_table().get(word_stem, frozenset())


@lru_cache(maxsize=1)
def _antonym_table() -> dict[str, frozenset[str]]:
    table = _stem_table(ANTONYM_WORDS_FILE)
    for a, b in DIRECTION_PAIRS:
        table.setdefault(stem(a), set()).add(stem(b))
        table.setdefault(stem(b), set()).add(stem(a))
    return {s: frozenset(others) for s, others in table.items()}


# The words WordNet 3.0's sense-tagged corpus has seen: ordinary English; a word outside is a term or a name.
COMMON_WORDS_FILE = Path(__file__).with_name("support_common_words.txt")


def common_word(word: str) -> bool:
    """Whether a word (any inflection) is ordinary English rather than a term or a name; "goes" and "does",
    which the stemmer leaves apart from their verb, are "go" and "do"."""
    return stem(word) in _common_stems() or (word.endswith("es") and stem(word[:-2]) in _common_stems())


@lru_cache(maxsize=1)
def _common_stems() -> frozenset[str]:
    lines = COMMON_WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(s for line in lines if not line.startswith("#") for s in line.split())


# Every other word WordNet 3.0 lists (the open classes: nouns, verbs, adjectives, adverbs), as stems.
DICTIONARY_WORDS_FILE = Path(__file__).with_name("support_dictionary_words.txt")
# The closed classes WordNet leaves out that the stop words do not hold: "-ever" and "there-"/"where-"
# compounds, prepositions, modal verbs.
CLOSED_CLASS_TEXT = """
whenever wherever whichever whatever whoever whomever however whence whereby wherein whereupon whereas
thereby therein thereof thereafter hereby herein onto unto toward towards amid amidst amongst among atop
throughout underneath beneath within without alongside ought shall need dare
"""
CLOSED_CLASS = frozenset(CLOSED_CLASS_TEXT.split())


def dictionary_word(word: str) -> bool:
    """Whether a lowercase word is an English word rather than a term or a name: a closed-class word, or
    one WordNet lists in any of its forms (a comparative "newer" is "new", "settable" is "set")."""
    if word in CLOSED_CLASS or common_word(word):
        return True
    s = stem(word)
    forms = [*word_forms(word)]
    if s.endswith(("er", "est")):  # a comparative or superlative: "newer", "widest"
        base = s[: -3 if s.endswith("est") else -2]
        forms += [base, base + "e", base[:-1] if len(base) > 2 and base[-1] == base[-2] else base]
    return any(f in _dictionary_stems() or f in _common_stems() for f in forms)


@lru_cache(maxsize=1)
def _dictionary_stems() -> frozenset[str]:
    lines = DICTIONARY_WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(s for line in lines if not line.startswith("#") for s in line.split())


# "None" capitalised after a sentence's first word, or written after "=", is Python's value, not a negation
# ("was None in 1.x", "on_setattr=None").
NONE_VALUE_RE = re.compile(r"(?:(?<=[\w,;:(`'\"] )|(?<==))None\b")


def normalise(text: str) -> str:
    low = NONE_VALUE_RE.sub("none_value", text).lower().replace("’", "'")
    for pattern, replacement in MULTIWORD:
        low = pattern.sub(replacement, low)
    return low


def tokenize(text: str) -> list[str]:
    """Lowercased words (identifiers and dotted names whole, possessives dropped) and clause punctuation."""
    return list(_tokenized(text))


@lru_cache(maxsize=4096)
def _tokenized(text: str) -> tuple[str, ...]:  # a sentence is read by several checks
    out = []
    for token in TOKEN_RE.findall(normalise(text)):
        token = token.removesuffix("'s").strip("'")
        if token:
            out.append(token)
    return tuple(out)


def able_bases(word: str) -> list[str]:
    """The verb an "-able"/"-ible" adjective is made from, as stems ("customizable" -> "customize"), which the
    stemmer leaves apart."""
    if len(word) < 7 or not word.endswith(("able", "ible")):
        return []
    base = word[:-4]
    return [stem(base), stem(base + "e")]


def word_stems(tokens: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for token in tokens:
        if not token[0].isalnum():
            continue
        out.add(stem(token))
        out.update(able_bases(token))
        if "_" in token or "." in token:  # an identifier's parts are words a sentence may use
            out.update(stem(part) for part in re.split(r"[._]+", token) if part)
    return out


def frames(tokens: list[str]) -> dict[tuple[str, str], set[str]]:
    """Each content word of a text under the two tokens around it (a full stop at either end)."""
    padded = [".", *_clause_ends(tokens), "."]
    out: dict[tuple[str, str], set[str]] = {}
    for j in range(1, len(padded) - 1):
        if padded[j].isalpha() and padded[j] not in STOP:
            out.setdefault((padded[j - 1], padded[j + 1]), set()).add(padded[j])
    return out


def _clause_ends(tokens: list[str]) -> list[str]:
    """A text's tokens with every clause's end written as a full stop ("known from ElementTree:" ends where
    "known from minidom." does)."""
    return ["." if t in (".", ":", ";", "!", "?") else t for t in tokens]


def swapped(tokens: list[str], missing: set[str], claim_frames: dict[tuple[str, str], set[str]]) -> list[str]:
    """A missing word where the claims, between the same two neighbours, write another word the sentence
    leaves out, one of the two a term rather than a common word ("like bash does" for "like ksh does"): a
    swapped name, however small a share of the sentence. Two common words there may be a paraphrase."""
    padded = [".", *_clause_ends(tokens), "."]
    sentence_stems = {stem(t) for t in tokens if t.isalpha()}  # "ksh" in KSH_TYPESET is not "ksh" written
    out = []
    for i in range(1, len(padded) - 1):
        if padded[i] not in missing:
            continue
        others = [
            w
            for w in claim_frames.get((padded[i - 1], padded[i + 1]), ())
            if not carried(w, sentence_stems) and not (common_word(w) and common_word(padded[i]))
        ]
        if others:
            out.append(f"{padded[i]} (the claim: {sorted(others)[0]})")
    return out


def content_words(tokens: list[str], code: set[str]) -> list[str]:
    """The words that carry what a sentence asserts: no stop word, no cue of another check, no number, no
    code token (code is compared as code)."""
    return [
        t
        for t in dict.fromkeys(tokens)
        if t[0].isalpha() and "_" not in t and "." not in t and len(t) > 2
        and t not in STOP and t not in STRONG_WORDS and t not in NEGATIONS and t not in ONLY
        and t not in NUMBER_WORDS and t not in code
    ]  # fmt: skip


def carried(word: str, stems: set[str]) -> bool:
    return any(v in stems for v in word_forms(word))


@lru_cache(maxsize=65536)
def word_forms(word: str) -> tuple[str, ...]:
    """The stems a word may appear as in a claim: its own; a derivation the stemmer leaves (lazily/lazy,
    writer/write); the documentation's other words for it (`terms`); the forms WordNet derives from it."""
    s = stem(word)
    out = [s]
    for suffix in ("li", "er", "or", "r"):
        if s.endswith(suffix) and len(s) - len(suffix) >= 4:
            base = s[: -len(suffix)]
            out += [base, base + "e", stem(base)]
    out += able_bases(word)
    out += [stem(other) for other in terms.other_words([word])]
    out += sorted(derived_stems(s))
    return tuple(dict.fromkeys(out))


def negative_forms(word: str) -> list[str]:
    """The word with a negative prefix put on ("visible" -> "invisible") or taken off."""
    out = [p + word for p in NEGATIVE_PREFIXES]
    out += [word[len(p) :] for p in NEGATIVE_PREFIXES if word.startswith(p) and len(word) - len(p) > 3]
    return out
