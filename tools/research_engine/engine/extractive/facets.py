"""The objective read as questions: its clauses, the entities a clause enumerates, a situation stated before
the questions, follow-ups carrying their subject, and each facet's topic as a phrase.

Owns `facets_of` (clauses split on "?", ";" and "and <question word>"; a clause's enumeration
(`enumerations`) kept as its items; "the maximum size of A and of B in C" one clause per thing; a scope or
condition the question opens with, "In Vim, what is ...", put last; a situation, "tig takes a long time
...; what can I change ...?", the context of each question asked in it, never split into questions of its
own; a follow-up's pronoun, "how many ... does it allow", read as who or what the first clause asks of, and
its "that cache" as the first clause names the cache) and `Facet.phrase` / `as_object` (a facet's topic as
the object of the plan's angle questions). A quotation is read as written (`quotes`); "A vs B: which ...?"
asks its question between A and B; a follow-up's "its default" of a long phrase is "the default of ...".
Pure text; `plan` turns the facets into the sub-questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_engine.engine.extractive.asked_of import WHAT_DOES_RE, AskedOf, asked_of, third_person
from research_engine.engine.extractive.enumerations import EDGE_WORDS, enumeration, join_items, of_each
from research_engine.engine.extractive.quotes import ENDS_SENTENCE, sealed, unsealed
from research_engine.engine.extractive.situations import SITUATION_HAPPENS_RE, in_sentence
from research_engine.engine.extractive.text import tokens
from research_engine.terms import STOP_WORDS

# The scope a clause ends with ("... data types in PostgreSQL" -> " in PostgreSQL"): a preposition and a name.
SCOPE_RE = re.compile(r"\s(?:in|on|for|with|of)\s+(?:an?\s+|the\s+)?[^\s].*$", re.IGNORECASE)
_SUBJECT_RE = re.compile(
    r"^(?:how|when|why|what|which)\s+(?:should|would|could|can|do|does|must)\s+(?P<subject>.+?)\s+"
    r"(?:choose|decide|pick|select)\b",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(
    r"^(?:(?:how(?:\s+(?:large|big|long|much|old|often|fast|high|low|small|wide)(?=\s+(?:is|are|was|were|do|does|did)\b))?"
    r"|what|why|when|which|who|where|whether)\b\s*)?(?:(?:do|does|did|is|are|was|were|can|could|"
    r"should|would|will|has|have)\b\s*(?:(?:i|we|you|one)\b\s*)?)?(?:the\s+)?",
    re.IGNORECASE,
)
# "backend should I use with" -> "backend to use with": the asker drops out of the topic phrase.
_ASKER_RE = re.compile(r"\s+(?:should|can|could|would|must|do|does)\s+(?:i|we|you|one)\s+", re.IGNORECASE)
_ASKED_BY_RE = re.compile(r"\b(?:i|we|you|one)\s*$", re.IGNORECASE)
_BE_RE = re.compile(
    r"^(?:(?:why|when|where)\s+)?(?:is|are|was|were)\s*(?:the\s*)?$", re.IGNORECASE
)  # "Why is X"
_PARTICIPLE_RE = re.compile(r"(?<=\S)\s+[a-z]\w*(?:ed|en)\b")  # "deprecated", "written"; never "United"
_POSSESSIVE_RE = re.compile(r"\b(?:my|our|your)\s+", re.IGNORECASE)  # the asker's: "for my Django models"
_ARTICLE_RE = re.compile(r"\bthe\s+$", re.IGNORECASE)
# A clause naming a subject of its own: a capitalised word after its first, a code token, a number.
_OWN_SUBJECT_RE = re.compile(r"\b[A-Z]{2,}\b|(?<=\w )[A-Z]\w+|\w_\w|\w\.\w|\(\)|\d")  # not the asker's "I"
# A follow-up clause that leans on the first one: "Which version added it?", "What replaces them?"
_PRONOUN_RE = re.compile(r"\b(it|they|them|its|their|this)\b", re.IGNORECASE)
_PLURAL_PRONOUNS = ("they", "them", "their")
PLURAL_RE = re.compile(r"[a-z][\w-]{2,}(?<![isu])s")  # "constraints", "filters"; not "status", "analysis"
_NAME_RE = re.compile(r"[A-Z][\w.+-]*[a-z][\w.+-]*(?=(?:'s)?\b)")  # "SQLite", "PostgreSQL's"
_THING_ASKED_RE = re.compile(
    r"^\s*(?:which|what)\s+(?P<thing>(?:[\w.+-]+\s+){0,3}[\w.+-]+?s)\s+(?:do|does|did|are|were|can|could|will)\b",
    re.IGNORECASE,
)
_WHICH_ONE_RE = re.compile(r"\b(which|what)\s+one\b", re.IGNORECASE)
QUESTION_START_RE = re.compile(
    r"^(?:(?:since|from|in|until|by|for|with|at)\s+(?:which|what|when)\b|"
    r"(how|what|why|when|which|who|where|whether|does|do|is|are|can|should|could|would|will|did)\b)",
    re.I,
)
_CLAUSE_SPLIT_RE = re.compile(
    r"\s*[?;]\s*|,?\s+and\s+(?=(?:(?:since|from|in|until|by|for|with|at)\s+(?:which|what|when)\b)|"
    r"(?:what|how|why|when|which|who|where|whether|does|do|is|are|can|should|has|have|did|was|were|will)\b)",
    re.IGNORECASE,
)
# A follow-up with no verb of its own ("since which version", "since when", "why"): it asks the first
# clause again, so a yes/no first clause is carried whole ("Since which version does Django support ...?").
_BARE_FOLLOW_UP_RE = re.compile(
    r"^(?:(?:since|from|in|until|by|for|with|at)\s+)?(?:which|what|when|why|how|where)(?:\s+\w+)?$",
    re.IGNORECASE,
)
_AUX = r"(?:does|do|did|is|are|was|were|can|could|should|would|will|has|have)"
_AUXILIARY_START_RE = re.compile(rf"^{_AUX}\b", re.IGNORECASE)


@dataclass
class Facet:
    """One facet of the objective: a clause, maybe with the entities it enumerates."""

    clause: str
    items: list[str] = field(default_factory=list)
    tail: str = ""  # what follows the enumeration ("for concurrent work")
    subject: str = ""  # who chooses ("a Python 3.11 program")
    asked: str = ""  # a follow-up's clause as written, before its subject was filled in

    @property
    def phrase(self) -> str:
        """The facet's topic in a few words, for the angle questions."""
        if self.items:
            return f"{join_items(self.items)}{self.tail}"
        clause = _GIVEN_RE.sub("", self.clause)  # the situation is context, not the topic
        lead = _LEAD_RE.match(clause)
        topic = clause[lead.end() :].strip() if lead else clause
        # The article the question's opening took stays with its noun: "of the Buffer() constructor".
        article = "the " if lead and _ARTICLE_RE.search(lead.group(0)) else ""
        if lead and _ASKED_BY_RE.search(lead.group(0)) and len(topic.split()) > 2:
            # "How do I enable persistent connections" -> "persistent connections": the asker's verb goes;
            # "choose the type of ... for my Django models" -> "the type of ... for Django models"
            topic, article = topic.split(" ", 1)[1], ""
            topic = _POSSESSIVE_RE.sub("", topic)
        elif lead and _BE_RE.search(lead.group(0)):
            # "Why is default_app_config deprecated in Django 3.2" -> "default_app_config in Django 3.2":
            # what the clause says of its subject goes, the scope stays.
            said = _PARTICIPLE_RE.search(topic)
            if said:
                scope = SCOPE_RE.search(topic[said.end() :])
                topic = topic[: said.start()] + (scope.group(0) if scope else "")
        elif lead and WHAT_DOES_RE.match(lead.group(0)):
            # "What does the exit status 141 mean" -> "the exit status 141": the verb asks something of it.
            asked = asked_of(topic)
            topic = asked.thing if asked else topic
        return _ASKER_RE.sub(" to ", article + topic if topic else clause)


def facets_of(objective: str) -> list[Facet]:
    """The objective's facets, in order: clauses split on "?", ";" and "and <question word>"."""
    text = _situation_as_context(sealed(" ".join(objective.split())))
    out: list[Facet] = []
    for clause in [part for whole in _clauses(text) for part in of_each(whole)]:
        clause = _scope_last(clause.replace(_SITUATION_AND, " ").strip(" ,.!?"))
        if not clause or not (tokens(clause) or (out and _PRONOUN_RE.search(clause))):
            # "when should each be used": no term of its own, the entities carry it ("how do I change it"
            # has none either, but asks about the first clause's topic: kept, and resolved below)
            continue
        facet = Facet(clause)
        asked = _GIVEN_RE.sub("", clause)
        found = enumeration(asked)
        if not found and asked != clause and _REFERS_BACK_RE.search(asked):
            found = enumeration(clause)  # "the difference between them, given that ... X and Y"
        if found:
            items, end = found
            facet.items = items
            tail = clause[end:].rstrip(" ,.")
            facet.tail = tail if tokens(tail) else ""
            subject = _SUBJECT_RE.match(clause)
            facet.subject = subject.group("subject").strip() if subject else ""
        out.append(facet)
    for facet in out[1:]:  # follow-ups carry their subject: "it" is the first clause's topic
        facet.asked = facet.clause
        facet.clause = _resolved(facet.clause, out[0])
    for facet in out:  # a quotation as the objective wrote it
        facet.clause, facet.tail, facet.subject, facet.asked = map(
            unsealed, (facet.clause, facet.tail, facet.subject, facet.asked)
        )
        facet.items = [unsealed(item) for item in facet.items]
    return out


_QUESTION_WORDS = frozenset({"why", "how", "what", "when", "where", "which", "who", "whether"})
_QUESTION_WORD_RE = re.compile(
    r"(?:how\s+(?:many|much|long|often)|what|which|whether|when|where|who)\b", re.I
)


def _clauses(text: str) -> list[str]:
    """`text` split into its questions. "and how many ..." goes on a question asked inside the one before
    ("How do I set how many history lines zsh keeps in memory and how many it saves to the history
    file?"): one question, never "How many how many history lines ...?"."""
    out: list[str] = []
    for part in _CLAUSE_SPLIT_RE.split(text):
        if part is None:
            continue
        opening = _QUESTION_WORD_RE.match(part.strip())
        inside = out and opening and re.search(rf"\s{re.escape(opening.group(0))}\b", out[-1], re.IGNORECASE)
        if inside:
            out[-1] = f"{out[-1]} and {part.strip()}"
        else:
            out.append(part)
    return out


# A question that opens with its scope or its condition ("In Vim, what is the difference between ...", "After
# editing the file, can I ..."): it goes last, where a question's scope stands ("... in Vim").
_LEADING_SCOPE_RE = re.compile(
    r"^(?P<prep>in|on|with|for|under|after|before|when|while|if|once|unless)\s+(?P<scope>[^,]{2,40}?),\s+"
    r"(?P<rest>.+)$",
    re.IGNORECASE,
)


def _scope_last(clause: str) -> str:
    m = _LEADING_SCOPE_RE.match(clause)
    if m is None or not QUESTION_START_RE.match(m.group("rest")) or _GIVEN_RE.search(m.group("scope")):
        return clause
    rest, given = m.group("rest"), ""
    situation = _GIVEN_RE.search(rest)
    if situation:
        rest, given = rest[: situation.start()], situation.group(0)
    return f"{rest[0].upper()}{rest[1:]} {m.group('prep').lower()} {m.group('scope')}{given}"


_SITUATION_AND = "\u2060"  # WORD JOINER: not a space, so no clause split falls inside a situation


def _situation_as_context(text: str) -> str:
    """ "tig takes a long time to show the commit list; what can I change in its configuration to make it
    load faster?" asks the question, in the situation the statement before it sets: one question, "What
    can I change in its configuration to make it load faster, given that tig takes a long time to show the
    commit list?", not a "What is known about tig takes a long time ...?" beside it."""
    m = _SITUATION_RE.match(text)
    opening = m.group("situation") if m else ""
    if not m or (QUESTION_START_RE.match(opening) and not _WHEN_STATED_RE.match(opening)):
        return text
    if INSTRUCTION_RE.match(opening):
        return text
    situation = in_sentence(m.group("situation").strip())
    if len(m.group("question").split()) < 3 and not m.group("more"):
        # "...: why?" asks the statement itself, not within it: "Why is it that my app crashes on start?"
        bare = _BARE_WHY_RE.match(m.group("question"))
        return f"Why is it that {situation}?" if bare else text
    if not m.group("mark") and not QUESTION_START_RE.match(m.group("question")):
        return text
    question = (m.group("question") + (m.group("mark") or "") + (m.group("more") or "")).strip().rstrip(" ?")
    compared = enumeration(situation) if _VERSUS_RE.search(situation) else None
    if compared and compared[1] == len(situation):
        # "GNU sed vs BSD sed: which options differ?" is no situation but what the question compares: "Which
        # options differ between GNU sed and BSD sed?", before its scope ("... use between A and B for ...").
        both = join_items(compared[0])
        if _BETWEEN_RE.search(question):
            question = re.sub(r"\b(?:them|they|the two|both)\b", both, question, count=1)
        else:
            scope = SCOPE_RE.search(question)
            cut = scope.start() if scope else len(question)
            question = f"{question[:cut]} between {both}{question[cut:]}"
        return f"{question[0].upper()}{question[1:]}?"
    # One clause, so a later split on ";" cannot cut it, nor one on "and" before a verb ("... prints an error
    # and does not run"): its "and" is joined to the next word until the clauses are split (`_SITUATION_AND`).
    situation = re.sub(r"\s+and\s+", f" and{_SITUATION_AND}", situation)
    question = f"{question[0].upper()}{question[1:]}"
    # The situation goes with each question asked in it, whose "them" or "ones" it says ("How can I get msgfmt
    # to include them, given that entries flagged as fuzzy ... are missing ...", "Is that a good idea, given
    # that ...").
    given = f", given that {situation}"
    cuts = [m.start() for m in _CLAUSE_SPLIT_RE.finditer(question) if m.start() > 0]
    for cut in reversed(cuts):
        question = f"{question[:cut]}{given}{question[cut:]}"
    return f"{question}{given}?"


# The situation is every statement before the closing question, one sentence or several ("My server cannot
# deliver mail directly; our provider wants ... password. How do I configure Postfix for that?").
# A question left without its mark ("... older release.' how do i fix this") is one when it opens as one.
_SITUATION_RE = re.compile(
    rf"^(?P<situation>[^?]{{12,}})(?:[;.:]|{ENDS_SENTENCE})\s+(?P<question>(?:(?![.;:]\s)[^?])+)"
    r"(?:(?P<mark>\?)(?P<more>\s+\S.*)?)?$"  # "... broken? Why does this happen and how do I ...?": all asked
)
_VERSUS_RE = re.compile(r"\s(?:vs\.?|versus)\s", re.IGNORECASE)
_BETWEEN_RE = re.compile(r"\b(?:between|among|compared?|versus|vs)\b", re.IGNORECASE)
# "When I open a file, Vim shows ...": a statement of when, not a question ("When does Vim show ...").
_WHEN_STATED_RE = re.compile(r"^when\s+(?:i|we|you|my|our|your|the|a|an)\s", re.IGNORECASE)
# An objective that opens by instructing ("Compare X and Y; which is faster?") sets no situation.
INSTRUCTION_RE = re.compile(
    r"^(?:compare|explain|describe|list|summari[sz]e|find|show|tell|give|outline|review|evaluate|assess|"
    r"research|investigate|identify|analy[sz]e|discuss|determine|check|please)\b",
    re.IGNORECASE,
)
_BARE_WHY_RE = re.compile(r"^\s*(?:why|how come)\s*$", re.IGNORECASE)


def _resolved(clause: str, first: Facet) -> str:
    """`clause` with a pronoun standing for the first facet replaced by that facet's topic; only in what the
    clause asks: its situation ("..., given that in fish it prints ...") says its own "it"."""
    given = _GIVEN_RE.search(clause)
    if given:
        return _resolved_asked(clause[: given.start()], first, situated=True) + given.group(0)
    return _resolved_asked(clause, first)


# "that analysis", "these options": a demonstrative and the noun it points back with.
_POINTED_RE = re.compile(r"\b(?:that|this|these|those)\s+(?P<noun>[a-z][\w-]{2,})\b", re.IGNORECASE)
_NAMING_RE = re.compile(r"[\w.+#'-]+", re.ASCII)
# Words a verb follows, never a noun ("I link", "to link"): a demonstrative's "that" points back to no verb.
_BEFORE_A_VERB = frozenset(
    "i we you they he she to can could will would should must do does did don't doesn't".split()  # noqa: SIM905
)


def _pointed_back(clause: str, first: Facet) -> str | None:
    """ "When is that cache purged?" after "When does nginx's proxy cache store ...": the demonstrative's noun
    as the first clause names it, with the words before it up to a function word ("nginx's proxy cache")."""
    m = _POINTED_RE.search(clause)
    said = first.clause.split()
    at = next((i for i, w in enumerate(said) if m and w.lower() == m.group("noun").lower()), None)
    if m is None or at is None:
        return None
    if m.group(0).lower().startswith("that") and at and said[at - 1].lower() in _BEFORE_A_VERB:
        return None  # "programs that link against it" after "When I link ...": a relative clause's verb
    start = at
    while start > max(0, at - 3) and _names(said[start - 1]):
        start -= 1
    phrase = " ".join(said[start : at + 1]) if start < at else f"the {said[at]}"
    return f"{clause[: m.start()]}{phrase}{clause[m.end() :]}"


def _names(word: str) -> bool:
    """A word that may be part of a thing's name: no punctuation around it, no function word."""
    return _NAMING_RE.fullmatch(word) is not None and word.lower() not in STOP_WORDS | EDGE_WORDS


def _resolved_asked(clause: str, first: Facet, *, situated: bool = False) -> str:
    if situated and SITUATION_HAPPENS_RE.search(clause):
        return clause
    pointed = _pointed_back(clause, first)
    if pointed:
        return pointed
    if _BARE_FOLLOW_UP_RE.match(clause) and _AUXILIARY_START_RE.match(first.clause):
        return f"{clause} {first.clause[0].lower()}{first.clause[1:]}"
    if _WHICH_ONE_RE.search(clause):
        thing = _THING_ASKED_RE.match(first.clause)
        if thing and not first.items:
            # "Which transaction isolation levels does PostgreSQL support, and which one is the default?"
            return _WHICH_ONE_RE.sub(lambda m: f"{m.group(1)} of the {thing.group('thing')}", clause, count=1)
        of = f" of {join_items(first.items)}" if first.items else f" ({first.phrase})"
        return _WHICH_ONE_RE.sub(lambda m: f"{m.group(0)}{of}", clause, count=1)
    if not _PRONOUN_RE.search(clause):
        own = tokens(clause)
        if (
            not set(own) & set(tokens(first.clause))
            and len(own) <= 3
            and not _OWN_SUBJECT_RE.search(clause)
            and not situated  # "Is that a good idea, given that ...": its situation says whose
            and first.phrase.lower() not in _QUESTION_WORDS  # "Why, and what should I do instead?"
        ):
            # "What is the default behaviour?" after "How do I enable persistent connections": whose?
            if _phrase_is_cut(first, first.phrase):
                return _after_first(clause, first)
            return f"{clause} for {first.phrase}"
        return clause
    topic = as_object(first)  # "how do I change it" -> "... change what Node.js does by default ..."
    asking = _asked_of_facet(first)
    if asking and not _ENDS_ON_PRONOUN_RE.search(clause):
        # "What does the kernel do when memory runs out, and how do I stop it from killing my database?": an
        # "it" said more of is the kernel; only the whole of what is done ("change it") is what it does.
        topic = asking.thing
    if PRONOUN_LED_RE.match(topic) or _HAPPENING_RE.match(topic):
        # "What do they mean, and how do I make them stop?": the first clause's topic is a pronoun's too, or
        # only that something happens ("What is going wrong, and how do I fix it?"); both stand for the
        # situation, which each question carries already.
        return clause
    actor = _actor(_GIVEN_RE.sub("", first.clause)) if _SUBJECT_PRONOUN_RE.search(clause) else None
    if actor:
        # "... and how many concurrent connections does it allow": "it" does something; it is who does it in
        # the first clause ("a PostgreSQL server", its situation left out: the clause carries that already),
        # not all that clause asks. What the asker does it with stays ("How many processes does the Django
        # test suite use by default in parallel?").
        who, how = actor
        said = _SUBJECT_PRONOUN_RE.sub(lambda m: f"{m.group(1)} {who}", clause, count=1)
        return f"{said} {how}" if how else said
    pronoun = _PRONOUN_RE.search(clause)
    plural = _plural_phrase(topic) if pronoun and pronoun.group(1).lower() in _PLURAL_PRONOUNS else None
    if plural and topic == first.phrase and WHAT_DOES_RE.match(first.clause):
        plural = topic  # "What do the -x and -v flags mean": "them" is all that it asks of, not "-v flags"
    if plural:
        # "Does SQLite enforce foreign key constraints by default, and how do I turn them on?": "them" is
        # the constraints, not all the first clause says; the product it named stays as the scope.
        topic = plural
        names = [n for n in _NAME_RE.findall(first.clause.split(" ", 1)[-1]) if n not in plural]
        clause = f"{clause} in {names[0]}" if names and names[0] not in clause else clause
    elif _phrase_is_cut(first, topic):
        return _after_first(clause, first)  # "upgrade to it" is no "upgrade to new in Privoxy 3.0.34"

    def swap(m: re.Match[str]) -> str:
        word = m.group(1).lower()
        if word not in ("its", "their"):
            return topic
        return f"{topic}'" if topic.endswith("s") and not topic.endswith("ss") else f"{topic}'s"

    owned = _POSSESSED_RE.match(clause, pronoun.start()) if pronoun else None
    if owned and _LONG_OWNER_RE.search(topic):
        # "what is its default value" of "the option that sets ... in GNU m4": "the default value of the
        # option ...", never "... in GNU m4's default value"; its noun stops at a function word.
        owns = owned.group("thing").split()
        noun = " ".join(owns[: next((i for i, w in enumerate(owns) if not _names(w)), len(owns))])
        if noun:
            rest = clause[owned.start("thing") + len(noun) :]
            return f"{clause[: owned.start()]}the {noun} of {topic}{rest}"
    return _PRONOUN_RE.sub(swap, clause, count=1)


# "its default value": the possessive and the noun it owns, up to a function word.
_POSSESSED_RE = re.compile(r"\b(?:its|their)\s+(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})", re.IGNORECASE)
# An owner too long for "'s": a relative clause or a prepositional phrase in it.
_LONG_OWNER_RE = re.compile(r"\s(?:that|which|who|in|of|for|on|with|from|to|when)\s", re.IGNORECASE)


def _phrase_is_cut(first: Facet, topic: str) -> bool:
    """Is `topic` what is left of the first question with its opening cut ("themes come built into MkDocs")?
    Not when the asker opens it ("How do I enable X": X is a phrase), nor when `facets` built it."""
    if first.items or topic != first.phrase or not QUESTION_START_RE.match(first.clause):
        return False
    return not _ASKER_WORD_RE.search(" ".join(first.clause.split()[:4])) and not reads_as_topic(topic)


def _after_first(clause: str, first: Facet) -> str:
    """A follow-up asked after the first clause, as the objective asked it: "Where does mkdocs build write the
    site by default, and which setting changes that?", not "... changes that for mkdocs build write ..."."""
    return f"{first.clause}, and {clause[0].lower()}{clause[1:]}"


# "does it allow": "it" does something. Never after "is" or "has" ("is it supported" is done to it).
_SUBJECT_PRONOUN_RE = re.compile(
    r"\b(does|do|did|can|could|should|would|will)\s+(?:it|they)\b", re.IGNORECASE
)
_ACTOR_RE = re.compile(
    rf"^(?:how|what|why|when|where|which)\b(?:\s+[\w.+-]+){{0,3}}?\s+{_AUX}\s+(?P<rest>.+)$", re.IGNORECASE
)
_ASKED_YES_NO_RE = re.compile(rf"^{_AUX}\s+(?P<rest>.+)$", re.IGNORECASE)  # "Does Django support ..."
_WHO_DID_RE = re.compile(  # "Which function replaced ...", "Which setting makes ...": its subject is asked
    rf"^(?:which|what)\s+(?!{_AUX}\b)(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,2}}?)\s+"
    r"(?P<did>[a-z]+(?:ed|s))\b(?!,)"  # "Which compression options, e.g. ...": a noun, then examples
    rf"(?!\s+{_AUX}\b)(?P<rest>.*)$",
    re.I,
)
_GIVEN_RE = re.compile(r",\s+given that .*$")
# A topic that only says something happens: what happens is the situation's.
_HAPPENING_RE = re.compile(r"^(?:going (?:wrong|on)|happening|wrong|the (?:problem|matter|cause))\b", re.I)
# A question that names what its situation enumerates only by a pronoun ("the difference between them"): the
# situation's "X and Y" are its items; otherwise they are context ("after I close Vim and open the file").
_REFERS_BACK_RE = re.compile(r"\b(?:them|they|both|either|each|these|those)\b", re.IGNORECASE)
# A topic that is only a pronoun's ("they mean", "that happen", "them back"): it names nothing of its own.
PRONOUN_LED_RE = re.compile(r"^(?:it|its|they|them|their|this|that|these|those|ones)\b", re.IGNORECASE)
_DETERMINER_RE = re.compile(r"^(?:a|an|the|my|our|your)$", re.IGNORECASE)


def _who_did(clause: str) -> str | None:
    """A question asking who did something, as a noun phrase: "Which function replaced pg_start_backup in
    PostgreSQL 15" -> "the function that replaced pg_start_backup in PostgreSQL 15"."""
    did = _WHO_DID_RE.match(clause)
    # "does" is the verb itself when only a pronoun follows: "Which sphinx-build option does that"
    main_verb = did is not None and re.fullmatch(
        r"\s+(?:that|this|it|so)\s*", did.group("rest"), re.IGNORECASE
    )
    if did is None or (re.fullmatch(_AUX, did.group("did"), re.IGNORECASE) and not main_verb):
        return None
    return f"the {did.group('thing')} that {did.group('did')}{did.group('rest')}"


def _actor(clause: str) -> tuple[str, str] | None:
    """Who does what `clause` asks about, and how the asker has it done: the subject after its auxiliary
    ("Which TCP port does a PostgreSQL server listen on" -> "a PostgreSQL server"; "Does Django support ..."
    -> "Django"), or, when the asker is the subject, what the asker acts on and the words after it ("How can
    I run my Django test suite in parallel" -> "the Django test suite", "in parallel"). Names alone are a
    subject; a determiner needs its noun, the word before the verb. None when the clause is not read so."""
    asked = _who_did(clause)
    if asked:
        return asked, ""
    m = _ACTOR_RE.match(clause) or _ASKED_YES_NO_RE.match(clause)
    if m is None:
        return None
    asking = asked_of(m.group("rest")) if WHAT_DOES_RE.match(clause) else None
    if asking:
        return asking.thing, ""  # "What does the git reflog do": the git reflog, whatever follows its verb
    said = m.group("rest").split()
    if said and said[0].lower() == "there":  # "Is there a built-in extension that ...": what there is
        return (" ".join(said[1:]), "") if len(said) > 1 else None
    acted_on = bool(said) and said[0].lower() in _ASKERS
    if acted_on:
        said = said[2:]  # the asker and their verb: what they act on follows
        if said and said[0].lower() in ("my", "our", "your"):
            said[0] = "the"
    determiner = bool(said) and _DETERMINER_RE.match(said[0]) is not None
    n = int(determiner)
    while n < len(said) and _SUBJECT_WORD_RE.match(said[n]):
        n += 1

    def plain(i: int) -> bool:
        return i < len(said) and said[i].isalpha() and said[i].islower() and said[i] not in STOP_WORDS

    if acted_on:
        while plain(n):  # "the Django test suite in parallel": up to the preposition
            n += 1
    elif determiner and plain(n) and plain(n + 1):
        n += 1  # "a PostgreSQL server listen": the noun, then the verb
    if n <= int(determiner):
        return None
    return " ".join(said[:n]), " ".join(said[n:]) if acted_on else ""


def _plural_phrase(topic: str) -> str | None:
    """The last plural noun phrase of `topic`: a plural word and up to two lowercase words before it, none
    a function word nor the verb after a name ("SQLite enforce foreign key constraints by default" ->
    "foreign key constraints"; "Django support asynchronous views" -> "asynchronous views")."""
    found = None
    said = topic.split()
    for i, word in enumerate(said):
        if not PLURAL_RE.fullmatch(word) or word in STOP_WORDS:
            continue
        start = i
        while (
            start > max(0, i - 2)
            and said[start - 1].islower()
            and said[start - 1] not in STOP_WORDS
            and not (start >= 2 and _NAME_RE.fullmatch(said[start - 2]))
        ):
            start -= 1
        found = " ".join(said[start : i + 1])
    return found


_DO_SUPPORT_RE = re.compile(
    # "how many lines of history" is asked whole: "... sets how many lines of history WeeChat keeps"
    r"^(?P<wh>how(?:\s+(?:many|much)(?:\s+[\w.-]+){1,4}?)?|why|when|where|what)\s+"
    r"(?P<aux>does|do|can|could|should|would|will|must)\s+(?P<rest>.+)$",
    re.I,
)
_ASKERS = frozenset({"i", "we", "you", "one"})
_SUBJECT_WORD_RE = re.compile(
    r"^(?:[A-Z][\w.+#-]*|[\w.+#-]*[_.()][\w.+#()-]*)(?:'s)?$"
)  # "SQLite", "asyncio.run()"


def as_object(facet: Facet) -> str:
    """The facet's topic as the object of "of", "regarding" or a follow-up's verb: its phrase, or for a
    question about how or what something does, an indirect question ("How does SQLite let readers ...
    work" -> "how SQLite lets readers ... work"; "What does Node.js do by default" -> "what Node.js does by
    default"; "How can Django cache views" -> "how Django can cache views"), when the subject is a name (a
    capitalised or code-like word, never the asker) or a verb "What does" asks with is read after it ("what
    the tool does when ..."). Otherwise the phrase: X of "What does X mean", or of a "What does X do" that
    says nothing more (`asked_of`)."""
    clause = _GIVEN_RE.sub("", facet.clause.rstrip(" ?"))  # the situation is the follow-up's own already
    asked = _who_did(clause) if not facet.items else None
    if asked:
        return asked
    m = _DO_SUPPORT_RE.match(clause) if not facet.items else None
    if m is None:
        return facet.phrase
    asking = _asked_of_facet(facet)
    if asking and (asking.bare or m.group("aux").lower() != "does"):
        return facet.phrase  # "What does SIGPIPE mean": SIGPIPE, not "what SIGPIPE means"
    if asking:  # "what the tool does when the output is empty"
        verb, _, particle = asking.verb.partition(" ")  # "look like" -> "looks like"
        said = ["what", asking.subject, third_person(verb), *([particle] if particle else [])]
        return " ".join(said) + asking.after
    said = m.group("rest").split()
    if said and said[0].lower() in _ASKERS:
        return facet.phrase  # "How do I enable X": the phrase already drops the asker and the verb
    n = 0
    while n < len(said) and _SUBJECT_WORD_RE.match(said[n]):
        n += 1
    if n == 0 or n >= len(said) or not said[n].isalpha() or not said[n].islower():
        return facet.phrase
    if said[n - 1].endswith("'s"):
        return facet.phrase  # "Python's asyncio module schedule": the noun comes first, the verb later
    subject, verb, rest = " ".join(said[:n]), said[n], said[n + 1 :]
    aux = m.group("aux").lower()
    if aux == "does":
        verb = third_person(verb)
    elif aux != "do":
        verb = f"{aux} {verb}"
    return " ".join([m.group("wh").lower(), subject, verb, *rest])


def _asked_of_facet(facet: Facet) -> AskedOf | None:
    """What "What does X <verb> ...?" asks of X, when the facet asks so (`asked_of`)."""
    clause = _GIVEN_RE.sub("", facet.clause.rstrip(" ?"))
    m = _DO_SUPPORT_RE.match(clause) if not facet.items and WHAT_DOES_RE.match(clause) else None
    return asked_of(m.group("rest")) if m else None


_ENDS_ON_PRONOUN_RE = re.compile(r"\b(?:it|them)\s*$", re.IGNORECASE)

# A topic that reads as the object of "of", "regarding" or "for" opens with an article, a possessive or a name
# ("the Buffer() constructor", "diff's side-by-side output", "PostgreSQL 15", "md5 or scram-sha-256",
# "default_app_config", "'Detached HEAD'"); what is left of a question with its opening cut ("check first",
# "themes come built into MkDocs", "Why", "I open a file, Vim shows ...", "In MIT Scheme, which ...") does
# not, and a question built on it is not a sentence.
_TOPIC_OPENING_RE = re.compile(
    r"^(?:[Tt]he|[Aa]n?)\s|^[\w.+#()-]+'s\s|^[A-Z][\w.+#()-]*\b|^\S*\d|^[\w.+#-]*[_.()][\w.+#()-]*|"
    r"^(?P<quote>[\"'])[^\"']+(?P=quote)(?:\s|$)"  # a name quoted: "'Detached HEAD' in git"
)
_NOT_A_TOPIC_OPENING = _QUESTION_WORDS | frozenset(
    "i we you my our your me us in on at for with from to by if once since".split()  # noqa: SIM905
)
_ASKER_WORD_RE = re.compile(r"\b(?:I|me|my|we|us|our|you|your)\b")
TOPIC_MAX_WORDS = 12


def reads_as_topic(topic: str, *, built: bool = False) -> bool:
    """Can `topic` be the object of "the limitations and drawbacks of", "what changed regarding" or a
    follow-up's "for"? One `facets` built (an indirect question, "how SQLite lets readers ... work"; an
    enumeration, "threads, processes and asyncio for concurrent work") can; what is left of the question's
    own words must open as a noun phrase does (`_TOPIC_OPENING_RE`), be one phrase (no comma, not the
    asker's own words) and be short enough to read."""
    if built:
        return True
    words = topic.split()
    if not words or words[0].lower() in _NOT_A_TOPIC_OPENING or len(words) > TOPIC_MAX_WORDS:
        return False
    one_phrase = "," not in topic and not _ASKER_WORD_RE.search(topic)
    return one_phrase and _TOPIC_OPENING_RE.match(topic) is not None


def question_terms(question: str) -> set[str]:
    """A planned question's terms: "given", which joins a situation on ("..., given that ..."), is none."""
    return set(tokens(question.replace(", given that ", ", ")))
