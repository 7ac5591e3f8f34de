"""A planned question's situation: `situation_parts` splits "..., given that <situation>" off what it asks,
and `situation_referent` tells what of the situation the asked clause leans on ("them", "it", "that").
`facets` writes the situation on (`facets._situation_as_context`); `features` reads it back to rank sentences.
"""

from __future__ import annotations

import re

from research_engine.engine.extractive.text import tokens
from research_engine.support_words import common_word
from research_engine.terms import STOP_WORDS


def situation_parts(question: str) -> tuple[str, str]:
    """A planned question and the situation it was asked in: "How can I get msgfmt to include them, given
    that entries flagged as fuzzy are missing ..." -> ("How can I get msgfmt to include them", "entries
    flagged as fuzzy are missing ..."); ("...", "") when it states none."""
    asked, given, situation = question.partition(", given that ")
    if not given:
        return question, ""
    return asked, situation.split(", given that ")[0].strip().rstrip(" ?")


def situation_referent(asked: str, situation: str) -> str:
    """What of the situation the asked clause leans on: nothing when it names its own topic; the
    situation's subject ("entries flagged as fuzzy in my .po file" of "... are missing from the catalog")
    when it says "them", "it" or "ones"; all of it when that subject is the asker ("I want the build to fail
    ...; which option does that?") or its verb cannot be told."""
    one = _INDEFINITE_ONE_RE.search(asked)
    if one and one.group(1).lower() not in _NOT_A_STAND_IN:
        # "How do I get CMake to write one, given that my editor wants a compile_commands.json file": "one"
        # stands for the thing the situation names with "a"
        named = list(_INDEFINITE_RE.finditer(situation))
        if named:
            return named[-1].group(0).strip()
    if not _LEANS_ON_RE.search(asked):
        # "that" alone stands for the whole situation ("Which option does that?", "Why does that happen?");
        # "that file" names its own topic.
        return situation if _STANDS_FOR_ALL_RE.search(asked) else ""
    said = situation.split()
    if not said or said[0].lower() in _PERSONAL:
        return situation
    bare = [w.strip("\"',.;:()").lower() for w in said] + [""]
    plural = [w.endswith("s") and not w.endswith(("ss", "us", "is")) for w in bare]
    verb_tests = (
        lambda i: bare[i] in _FINITE,  # "are missing", "never show up"
        lambda i: plural[i] and bare[i + 1] in _AFTER_VERB,  # "appears in two menus", "takes a long time"
        lambda i: plural[i - 1] and not plural[i] and bare[i + 1] in _AFTER_VERB,  # "warnings appear in"
    )
    for is_verb in verb_tests:
        found = next((i for i in range(1, len(said)) if is_verb(i)), None)
        if found is not None:
            subject = " ".join(said[:found])
            # A bare name ("tig takes a long time to show the commit list") is the actor, not what the
            # pronoun stands for ("make it load faster": the commit list): then all of the situation is.
            return subject if len(tokens(subject)) >= 2 else situation
    return situation


# "the first one" is a noun's stand-in, "which ones" a reference.
_LEANS_ON_RE = re.compile(
    r"\b(?:it|its|they|them|their|these|those|(?:which|of the)\s+ones)\b", re.IGNORECASE
)
_STANDS_FOR_ALL_RE = re.compile(
    r"\b(?:that|this)\s*$|\b(?:does|do|did|can|could|will|would|should|is|was)\s+(?:that|this)\b",
    re.IGNORECASE,
)
# "one" closing the asked clause after a verb stands for a thing the situation names with "a" ("write one");
# "which one", "the one", "each one" do not.
_INDEFINITE_ONE_RE = re.compile(r"\b(\w+)\s+one\s*\??\s*$", re.IGNORECASE)
_NOT_A_STAND_IN = frozenset("which the each every no any this that only just a another some such".split())  # noqa: SIM905
# A thing named with "a": the article and up to four words, up to a clause's or a prepositional phrase's edge.
_INDEFINITE_RE = re.compile(
    r"\b(?:a|an)\s+(?:(?!(?:and|or|but|that|which|to|in|on|for|with|from|of|by)\b)[\w./+-]+\s*){1,4}",
    re.IGNORECASE,
)
_PERSONAL = frozenset({"i", "we", "you", "he", "she", "they", "it", "one"})
# A finite verb's tell-tales where no tagger is at hand: an auxiliary, modal or negation ("are missing",
# "never show up") or a verb in -s before what a verb takes ("appears in two menus", "takes a long time").
_FINITE = frozenset(
    "is are was were be been has have had do does did don't doesn't didn't can cannot can't could will won't "  # noqa: SIM905
    "would should may might must never always no longer still".split()
)
_AFTER_VERB = frozenset(
    "a an the my our your its their this these those some no all every in on at to from for with by into "  # noqa: SIM905
    "of up out down off over under about as after before when if".split()
)


# Where a statement of several sentences is joined into one clause ("... after my cursor. It distracts me").
_SENTENCE_END_RE = re.compile(r"(?<=[\w)\"'\u201d\u2019])[;.:]\s+")
_TITLE_WORD_RE = re.compile(r"[A-Z][a-z]*(?:-[a-z]+)*")
# Words that open a statement and are never a name, stop words or not ("Since upgrading", "While I type").
_OPENING_WORDS = frozenset(
    {"the", "a", "an", "my", "our", "your", "this", "these", "those", "some", "when", "if", "it", "they"}
    | {"there", "that", "since", "whenever", "although", "though", "while", "after", "before", "once"}
)
# "Why does this happen, given that ...": what happens is the situation.
SITUATION_HAPPENS_RE = re.compile(r"\b(?:this|that|it)\s+(?:happens?|occurs?)\b", re.IGNORECASE)


def in_sentence(statement: str) -> str:
    """A statement as it reads written on inside a question ("..., given that <statement>"): its sentences
    joined by ", and ", and each one's first word lowercased where it is an ordinary word, not a name:
    "Entries flagged as fuzzy are missing. It distracts me" -> "entries flagged as fuzzy are missing, and it
    distracts me"; "Postfix", "I", "Coverage.py" and a word the statement capitalises again stay."""
    parts = _SENTENCE_END_RE.split(statement)
    return ", and ".join(_lowered_opening(part, statement) for part in parts)


def _lowered_opening(sentence: str, statement: str) -> str:
    first, _, rest = sentence.partition(" ")
    if first == "I" or first.startswith("I'") or not _TITLE_WORD_RE.fullmatch(first):
        return sentence
    ordinary = all(common_word(part) for part in first.lower().split("-"))
    if first.lower() not in STOP_WORDS | _OPENING_WORDS and not ordinary:
        return sentence  # "Postfix", "Wireshark": a name
    again = (m.start() for m in re.finditer(rf"\b{re.escape(first)}\b", statement) if m.start() > 0)
    if any(not statement[:at].rstrip().endswith((".", ";", ":", "?", "!")) for at in again):
        return sentence  # capitalised again inside a sentence: a name ("Apache runs, but Apache logs ...")
    return f"{first.lower()} {rest}" if rest else first.lower()
