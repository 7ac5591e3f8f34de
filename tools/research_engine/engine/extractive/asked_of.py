"""What "What does X <verb> ...?" asks of X: its meaning, its effect, what it gives back.

Owns `asked_of` ("the exit status 141 mean" -> X "the exit status 141", the verb "mean"), so a follow-up's
"it" is X and never "X mean", and `third_person` (the verb as X takes it in an indirect question: "what
the tool does when ..."), and `gerund` (a how-to as the asker's doing: "keeping a copy of the key", for
`plan`'s angle questions). Pure text; `facets` reads the questions.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from research_engine.engine.extractive.text import tokens

WHAT_DOES_RE = re.compile(r"^what\s+(?:does|do|did)\b", re.IGNORECASE)
# The verbs "What does X ...?" asks with: of its meaning, its effect, what it gives back; the verb ends the
# question or a preposition or condition follows it ("do to", "print when"), so "the print function" and
# "Python 2's print statement look like" are no "print". Lowercase only: "the SHOW command" names a command.
_ASKED_OF_RE = re.compile(
    r"\s(?P<verb>mean|do|return|control|contain|represent|indicate|signify|denote|imply|stand for|refer to|"
    r"look like|consist of|print|output|show|produce|cause|affect|say|include|accept|expect|store|hold|"
    r"measure|report|match|check|specify)"
    r"(?P<after>\s+(?:in|on|at|to|for|with|by|from|about|when|if|while|after|before|during|unless|once)\b.*)?$"
)
_MEANING_VERBS = frozenset(
    {"mean", "represent", "indicate", "signify", "denote", "imply", "stand for", "refer to"}
)
_QUOTED_RE = re.compile(r"\"[^\"]*\"|(?<!\w)'[^']*'(?!\w)")  # a verb in a quotation is the quotation's
# The scope after the verb stays with X ("return in PostgreSQL"); a condition ("mean when ...") does not.
_KEPT_SCOPE_RE = re.compile(
    r"^\s+(?:in|on)\s+(?![^,]*\b(?:when|if|while|after|before|because|unless)\b)[^,]+$", re.IGNORECASE
)


class AskedOf(NamedTuple):
    """ "X <verb> ...", what "What does X <verb> ...?" leaves of the question."""

    subject: str  # X
    verb: str
    after: str  # what follows the verb: a scope ("in PostgreSQL"), a condition ("when ..."), an object

    @property
    def thing(self) -> str:
        """X with a scope that follows the verb: "the EXPLAIN command return in PostgreSQL" -> "the EXPLAIN
        command in PostgreSQL"."""
        return self.subject + (self.after if _KEPT_SCOPE_RE.match(self.after) else "")

    @property
    def bare(self) -> bool:
        """Does a follow-up's "it" stand for X? When nothing but a scope follows the verb, or it asks what X
        means; else for what X does ("What does Node.js do by default when ..., and how do I change it?")."""
        return not self.after or bool(_KEPT_SCOPE_RE.match(self.after)) or self.verb in _MEANING_VERBS


def asked_of(topic: str) -> AskedOf | None:
    """ "X <verb> ..." read so, or None when no verb "What does ...?" asks with follows a subject."""
    asked = _ASKED_OF_RE.search(_QUOTED_RE.sub(lambda m: "_" * len(m.group(0)), topic))
    if asked is None or not tokens(topic[: asked.start()]):
        return None
    after = topic[asked.start("after") :] if asked.group("after") else ""
    return AskedOf(topic[: asked.start()], asked.group("verb"), after)


def third_person(verb: str) -> str:
    """The verb as "it" takes it: let -> lets, pass -> passes, apply -> applies, have -> has."""
    if verb in ("have", "be", "do", "go"):
        return {"have": "has", "be": "is", "do": "does", "go": "goes"}[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# One syllable, one vowel, one final consonant: "set" -> "setting", "stop" -> "stopping" (not "fix", "show").
_DOUBLED_END_RE = re.compile(r"[^aeiou]*[aeiou][^aeiouwxy]")


def gerund(verb: str) -> str:
    """A verb's -ing form: "keep" -> "keeping", "make" -> "making", "set" -> "setting", "tie" -> "tying"."""
    v = verb.lower()
    if v.endswith("ie"):
        return f"{v[:-2]}ying"
    if len(v) > 2 and v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return f"{v[:-1]}ing"
    if _DOUBLED_END_RE.fullmatch(v):
        return f"{v}{v[-1]}ing"
    return f"{v}ing"
