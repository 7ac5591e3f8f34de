"""The sentence-support check: each sentence of a deliverable holds only what the claims it cites hold.

`report check` (and so `report finish`, the skills and the headless engine) judges every sentence of a block
that states facts against the text and quotes of the claims its citation covers (`prose` splits and groups
the sentences). A sentence fails, with the words at fault, for any of these kinds:

- unsupported: its content words (stop words left out, inflection folded by the Snowball English stemmer,
  British spellings by WordNet's variants, a few derivations and irregular verbs, the forms WordNet derives
  from a common word, the documentation's other words from `terms`) are not substantially in the cited
  claims: more than `MISSING_SHARE` of them (at least one allowed) are in neither the claims nor the
  question, or a code token it states is in no cited claim;
- contradiction: a negation ("not", "no", "never", "without", "no longer", "cannot", "unless", "instead of",
  "rather than") or "only" in the sentence that no cited claim puts on the same words, while the claims use
  them (a negating verb, "avoiding reloads", agrees with "not reloaded"; an "only" beside an order word is
  the claims' order); or a claim's negation whose words the sentence states without one where the claims
  never affirm them: "can be overridden" against "cannot be overridden" (`support_negation`); or a word
  whose negative (un-, in-, non-, dis-) the claims use instead; or an antonym, two words exchanged or an
  order reversed (`support_opposites`);
- overclaim: an absolute, superlative or guarantee (`STRONG_WORDS`) no cited claim uses (or says in other
  words: "have to" for "must", a maximum for "largest"), a concession over every case ("whatever its size",
  "no matter how"), or a causal link (`CAUSAL_RE`) where no cited claim makes one (a purpose or a condition
  is one);
- misattributed: it fails, yet would pass were another claim of the run cited too: it restates that claim
  (named in the finding: cite it);
- number, name: a number (with unit and scale; number words and multiples count; "zero" and "one" where the
  claims write another figure after the same word) or a name (capitalised, a lowercase word with a figure,
  one no dictionary lists: "smtp", or a hyphenated name coined or one part off the claims' "also-notify")
  that neither the claims nor the question hold, or a code token in no claim (the question's own name, "the
  pam_unix module", where the claims say "this module"; `support_names`);
  code is compared as code: `f()` is `f(arg)`, a command line's options are its parts, a dotted name matches
  the last parts of a claim's only when one of the claim's names ends that way, and a longer one needs its
  extra parts in the claims' or the question's words; or a term swapped for the claims' word between the same
  two neighbours (`support_words.swapped`).

The objective and the sub-questions are context a sentence may restate: a question written out in the
sentence is set aside before judging, and its words carry content, numbers and names (not code tokens).
Lexical, deterministic and linear in the deliverable: the claims are prepared once per deliverable; only a
sentence that fails looks at the other claims (through an index of their stems). A sentence whose every word
is its claims' but that swaps roles its words do not show, or uses an opposite WordNet does not list, passes:
that is the verifier's to judge (bench/faithfulness.py's `beyond_lexical`). Thresholds were chosen on the dev
set's tune half (Django, PostgreSQL) and measured on its check half (Flask, SQLAlchemy); docs/architecture.md
gives both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from research_engine import prose, support_names
from research_engine import support_negation as negation
from research_engine import support_opposites as opposites
from research_engine.support_words import (
    CAUSAL_RE,
    CLAIM_CAUSAL_RE,
    CLAIM_STRENGTH,
    NEGATING_VERBS,
    NEGATIVE_PREFIXES,
    NUMBER_WORD_RE,
    NUMBER_WORDS,
    STOP,
    STRENGTH_GROUP,
    STRENGTH_IDIOM_RE,
    STRONG_WORDS,
    UNIVERSAL_CONCESSION_RE,
    carried,
    content_words,
    frames,
    negative_forms,
    normalise,
    stem,
    swapped,
    tokenize,
    word_stems,
)

KINDS = ("unsupported", "contradiction", "overclaim", "misattributed", "number", "name")
UNCITED = "uncited"  # a fact sentence after its block's last citation (the block rule's, sentence-sized)
KIND_PRIORITY = (UNCITED, "misattributed", "contradiction", "number", "name", "overclaim", "unsupported")

# Chosen on the tune half of bench/faithfulness_devset.yaml (see docs/architecture.md): the share of a
# sentence's content words that may be in neither its claims nor the question (a synonym, a linking verb).
MISSING_SHARE = 0.34
MIN_MISSING_ALLOWED = 1

# A footnote's figure glued on to a word of letters ("CPython1", "order=True1"), before a space or a stop;
# never a dotted or underscored name's last figure ("write.csv2" is another function than "write.csv").
FOOTNOTE_RE = re.compile(r"(?<![\w.])([A-Za-z]{3,})\d(?=[\s.,;:)]|$)")
# A version written on to its product's name ("pytest-2.3", "python-3.11"): a claim's figure all the same.
GLUED_VERSION_RE = re.compile(r"(?<=[A-Za-z])-(?=\d)")
# A negative prefix written with a hyphen ("non-obvious"): the claim's word is the prefixed one.
HYPHEN_PREFIXED_RE = re.compile(r"\b(" + "|".join(NEGATIVE_PREFIXES) + r")-([a-z]{3,})\b")
# The toolkit's own asides after a citation (the extractive writer's): they say how a claim stands, not what.
TOOL_ASIDE_RE = re.compile(r"\((?:partly supported|read with caution|sources?:)[^()]*\)", re.I)


@dataclass
class Held:
    """What a set of claims holds, prepared once: their text and quotes as the checks read them."""

    ids: tuple[str, ...]
    plain: str  # markup removed, case folded
    stems: set[str]
    cues: list[negation.Cue]
    implied: list[
        negation.Cue
    ]  # negations a verb states ("avoiding reloads"): they agree with a sentence's "not"
    affirmed: set[str]  # stems stated outside every negation
    affirmed_clauses: list[frozenset[str]]  # the same, clause by clause (what a clause states together)
    affirmed_words: set[str]  # the same words as written
    strong: set[str]
    frames: dict[tuple[str, str], set[str]]  # a content word's neighbours -> the words between them
    causal: bool
    numbers: list[prose.StatedNumber]
    code: set[str]  # code tokens' bases (call arguments dropped), case folded
    words: set[str]  # every token, case folded
    around: dict[str, set[str]]  # a word's stem -> the content stems beside it (`opposites.REACH` each side)
    left: dict[str, set[str]]  # a word's stem -> the content stem just before it in its clause
    right: dict[str, set[str]]  # ... and just after it
    tokens: list[str]  # the claims' tokens, one claim after another
    urls: set[str]  # the URLs the claims write (`plain` has none)
    joined: set[str]  # two neighbouring words written as one ("timing out" -> "timeout", "timingout")
    hyphenated: set[str]  # the hyphenated names the claims write ("also-notify")
    figures_after: dict[str, set[float]]  # a word's stem -> the figures the claims write right after it

    @classmethod
    def of(cls, ids: Iterable[str], texts: Iterable[str]) -> Held:
        raw = " .\n".join(texts)
        plain = prose.plain_text(raw)  # a negation's reach ends with its text
        either = _with_footnotes_off(plain)  # names, code and words: with or without a footnote's mark
        tokens = tokenize(plain)
        covered: set[int] = set()
        cues = list(dict.fromkeys(negation.cues(tokens, covered)))
        prefixed = {p + w for p, w in HYPHEN_PREFIXED_RE.findall(plain.casefold())}  # "non-obvious"
        sides = opposites.sides(tokens)
        return cls(
            ids=tuple(ids),
            plain=either.casefold(),
            stems=word_stems(tokenize(either)),
            cues=cues,
            implied=[c for c in negation.cues(tokens, None, NEGATING_VERBS) if c.kind == "neg"],
            affirmed=word_stems(t for i, t in enumerate(tokens) if i not in covered),
            affirmed_clauses=negation.affirmed_clauses(tokens, covered),
            affirmed_words={t for i, t in enumerate(tokens) if i not in covered} | prefixed,
            strong={STRENGTH_GROUP[t] for t in tokens if t in STRENGTH_GROUP}
            | {group for pattern, groups in CLAIM_STRENGTH if pattern.search(plain) for group in groups}
            | ({STRENGTH_GROUP["all"]} if UNIVERSAL_CONCESSION_RE.search(plain) else set()),
            frames=frames(tokens),
            causal=bool(CLAIM_CAUSAL_RE.search(normalise(plain))),
            numbers=stated_numbers(GLUED_VERSION_RE.sub(" ", plain))
            + [
                prose.StatedNumber(t, support_names.SMALL_FIGURES[t], None)
                for t in tokens
                if t in support_names.SMALL_FIGURES
            ],
            code={support_names.code_base(t) for t in support_names.code_in(plain)},
            words=set(tokens) | prefixed,
            around=opposites.around(tokens),
            left=sides[0],
            right=sides[1],
            tokens=tokens,
            urls=_urls(raw),
            joined=support_names.joined(tokens),
            hyphenated=support_names.hyphenated(plain.casefold()),
            figures_after=support_names.figures_after(tokens),
        )

    def merged(self, other: Held) -> Held:
        return Held(
            ids=self.ids + other.ids,
            plain=f"{self.plain} {other.plain}",
            stems=self.stems | other.stems,
            cues=list(dict.fromkeys(self.cues + other.cues)),
            implied=self.implied + other.implied,
            affirmed=self.affirmed | other.affirmed,
            affirmed_clauses=self.affirmed_clauses + other.affirmed_clauses,
            affirmed_words=self.affirmed_words | other.affirmed_words,
            strong=self.strong | other.strong,
            frames={
                k: self.frames.get(k, set()) | other.frames.get(k, set())
                for k in {*self.frames, *other.frames}
            },
            causal=self.causal or other.causal,
            numbers=self.numbers + other.numbers,
            code=self.code | other.code,
            words=self.words | other.words,
            around=opposites.merged(self.around, other.around),
            left=opposites.merged(self.left, other.left),
            right=opposites.merged(self.right, other.right),
            tokens=[*self.tokens, ".", *other.tokens],
            urls=self.urls | other.urls,
            joined=self.joined | other.joined,
            hyphenated=self.hyphenated | other.hyphenated,
            figures_after={
                k: self.figures_after.get(k, set()) | other.figures_after.get(k, set())
                for k in {*self.figures_after, *other.figures_after}
            },
        )


def _beside(text: str, raw: str) -> set[str]:
    """The stems of the words right beside a figure wherever a text writes it (its unit among them), within
    its clause: what the figure counts or names ("the last 5 years", "Django 4.2")."""
    out = {stem(w.casefold()) for w in re.findall(r"[A-Za-z]+", raw)}
    for m in re.finditer(rf"(?<![\w.]){re.escape(raw)}(?![\w])", text, re.IGNORECASE):
        before = re.split(r"[.;:,()]", text[: m.start()])[-1].split()[-1:]
        after = re.split(r"[.;:,()]", text[m.end() :])[0].split()[:1]
        words = [w.strip("'\"`?!").casefold() for w in before + after]
        out.update(stem(w) for w in words if w.isalpha() and w not in STOP)
    return out


def _with_footnotes_off(plain: str) -> str:
    """A claim's text, and again without the footnote marks a page glues on to words ("CPython1", "True1"),
    so that the names and code a sentence writes are found either way."""
    bare = FOOTNOTE_RE.sub(r"\1", plain)
    return plain if bare == plain else f"{plain}\n{bare}"


def _urls(text: str) -> set[str]:
    """The URLs a text writes, compared as code: case folded, closing punctuation and brackets dropped."""
    return {m.group(0).casefold().rstrip(".,;:!?)]}'\"`>") for m in prose.URL_RE.finditer(text)}


def stated_numbers(text: str) -> list[prose.StatedNumber]:
    """`prose.numbers`, and number words from two to ninety ("three categories" is 3)."""
    words = [prose.StatedNumber(m.group(0), NUMBER_WORDS[m.group(0).lower()], None)
             for m in NUMBER_WORD_RE.finditer(text)]  # fmt: skip
    return prose.numbers(text) + words


@dataclass(frozen=True)
class Fault:
    kind: str
    words: tuple[str, ...]
    claims: tuple[str, ...] = ()  # misattributed: the claims that hold what the sentence says

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "words": list(self.words)}
        if self.claims:
            out["claims"] = list(self.claims)
        return out


@dataclass
class Sentence:
    """One judged sentence: where it is, the claims its citation covers, and what is wrong with it."""

    line: int
    text: str
    cited: list[str]
    faults: list[Fault] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults

    @property
    def kind(self) -> str | None:
        """The fault that names the mend, the most specific first: misattributed (cite the other claim), a
        contradiction, a number, a name, an overclaim, then unsupported words."""
        order = {k: i for i, k in enumerate(KIND_PRIORITY)}
        return min((f.kind for f in self.faults), key=lambda k: order.get(k, 99)) if self.faults else None

    def message(self) -> str:
        shown = self.text if len(self.text) <= 100 else self.text[:97] + "..."
        if self.kind == UNCITED:
            return f"line {self.line}: states a fact after the block's last citation: {shown!r}"
        held = ", ".join(self.cited)
        parts = []
        for fault in self.faults:
            words = ", ".join(fault.words)
            if fault.kind == "misattributed":
                parts.append(
                    f"misattributed: restates {', '.join(fault.claims)} ({words}) but cites only {held}: "
                    f"cite {', '.join(fault.claims)}"
                )
            elif fault.kind in ("number", "name"):
                parts.append(f"{fault.kind}: states {words}, which {held} does not hold (text or quote)")
            elif fault.kind == "contradiction":
                parts.append(f"contradiction: {words} contradicts {held}")
            elif fault.kind == "overclaim":
                parts.append(f"overclaim: says {words}, which {held} does not")
            else:
                parts.append(f"unsupported: asserts {words}, which {held} never says")
        return f"line {self.line}: {shown!r}: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "text": self.text,
            "claims": self.cited,
            "ok": self.ok,
            "kind": self.kind,
            "faults": [f.to_dict() for f in self.faults],
        }


class Judge:
    """The sentence-support check for one deliverable: claims prepared once, then `block` per block."""

    def __init__(
        self, claims: dict[str, dict[str, Any]], question: str, questions: Iterable[str] = ()
    ) -> None:
        self.claims = claims
        self.question = prose.plain_text(question)
        self.question_tokens = tokenize(self.question)
        self.question_stems = word_stems(self.question_tokens)
        self.question_plain = self.question.casefold()
        self.question_numbers = [(n, _beside(self.question, n.raw)) for n in stated_numbers(self.question)]
        self.question_urls = _urls(question)
        self.questions = sorted(
            {" ".join(prose.plain_text(q).split()).casefold() for q in questions if q.strip()}, key=len
        )[::-1]
        self._held: dict[str, Held] = {}
        self._index: dict[str, set[str]] | None = None

    def held(self, ids: Iterable[str]) -> Held | None:
        views = [self._claim(c) for c in ids if c in self.claims]
        if not views:
            return None
        out = views[0]
        for view in views[1:]:
            out = out.merged(view)
        return out

    def _claim(self, clm: str) -> Held:
        if clm not in self._held:
            self._held[clm] = Held.of([clm], claim_texts(self.claims[clm]))
        return self._held[clm]

    def block(self, text: str, line: int) -> list[Sentence]:
        """Every sentence of one fact-stating block, judged against the claims its citation covers. A block
        with no citation at all is the block rule's (`report`: uncited-fact), not judged here."""
        out: list[Sentence] = []
        grouped = prose.groups(text)
        if not any(cited for _, cited in grouped):
            return out
        for group, cited in grouped:
            held = self.held(cited) if cited else None
            for sentence in group:
                judged = Sentence(line, sentence, list(cited))
                if not cited:
                    if prose.states_fact(sentence):
                        judged.faults.append(Fault(UNCITED, ()))
                    else:
                        continue
                elif held is not None:
                    judged.faults = self.faults(sentence, held)
                    judged.faults = self._attribution(sentence, held, judged.faults)
                out.append(judged)
        return out

    # ------------------------------------------------------------------ the kinds

    def faults(self, sentence: str, held: Held) -> list[Fault]:
        plain = self._without_questions(prose.plain_text(TOOL_ASIDE_RE.sub(" ", sentence)))
        tokens = tokenize(plain)
        out = []
        for check in (self._numbers, self._names, self._content, self._polarity, self._strength):
            fault = check(plain, tokens, held)
            if fault is not None:
                out.append(fault)
        named = [f for f in out if f.kind == "name"]
        if len(named) > 1:  # a term also found swapped for the claims' word: one finding, the swap first
            swaps = [w for f in named for w in f.words if " (the claim: " in w]
            said = {w.split(" (the claim: ")[0] for w in swaps}
            rest = [w for f in named for w in f.words if " (the claim: " not in w and w not in said]
            out = [f for f in out if f.kind != "name"] + [Fault("name", tuple(dict.fromkeys(swaps + rest)))]
        pages = sorted(_urls(sentence) - held.urls - self.question_urls)  # a URL names a page: as code
        if pages:
            named = [f for f in out if f.kind == "name"]
            out = [f for f in out if f.kind != "name"] + [
                Fault("name", (*pages, *(named[0].words if named else ())))
            ]
        return out

    def _without_questions(self, plain: str) -> str:
        folded = " ".join(plain.split())
        low = folded.casefold()
        for q in self.questions:
            at = low.find(q)
            while at >= 0:
                folded, low = folded[:at] + " " + folded[at + len(q) :], low[:at] + " " + low[at + len(q) :]
                at = low.find(q)
        return folded

    def _numbers(self, plain: str, tokens: list[str], held: Held) -> Fault | None:
        missing = [
            n.raw
            for n in stated_numbers(plain)
            if not any(n.backed_by(b) for b in held.numbers)
            and not any(
                n.backed_by(q) and beside & _beside(plain, n.raw) for q, beside in self.question_numbers
            )
        ]  # a question's figure restated says what it counts too: "the last 5 years" is no "five languages"
        missing += support_names.small_figures(tokens, held)
        return Fault("number", tuple(dict.fromkeys(missing))) if missing else None

    def _names(self, plain: str, tokens: list[str], held: Held) -> Fault | None:
        missing = support_names.unheld(plain, tokens, held, self.question_plain, self.question_stems)
        return Fault("name", tuple(missing)) if missing else None

    def _content(self, plain: str, tokens: list[str], held: Held) -> Fault | None:
        words = content_words(tokens, {support_names.code_base(t) for t in support_names.code_in(plain)})
        if not words:
            return None
        missing = [
            w
            for w in words
            if not carried(w, held.stems)
            and not carried(w, self.question_stems)
            and not any(carried(f, held.stems) for f in negative_forms(w) if len(f) < len(w))
        ]  # "unsupported" where a claim writes "not supported": the polarity check judges the prefix
        allowed = max(MIN_MISSING_ALLOWED, int(MISSING_SHARE * len(words)))
        if len(missing) > allowed:
            return Fault("unsupported", tuple(missing))
        swaps = swapped(tokens, set(missing), held.frames)
        return Fault("name", tuple(swaps)) if swaps else None

    def _polarity(self, plain: str, tokens: list[str], held: Held) -> Fault | None:
        negated: set[int] = set()
        faults = negation.faults(tokens, held, negated)
        sentence_stems = word_stems(tokens)
        faults += opposites.negatives(tokens, negated, held.stems, held.affirmed_words, held.around)
        faults += opposites.antonyms(
            tokens, negated, sentence_stems, held.stems, held.affirmed, held.around, held.tokens
        )
        faults += opposites.quantities(tokens, negated, held.tokens)
        faults += opposites.frequencies(tokens, negated, held.tokens)
        faults += opposites.exchanged(tokens, held.stems, held.left, held.right, held.tokens)
        faults += opposites.reordered(tokens, held.stems, held.tokens)
        return Fault("contradiction", tuple(dict.fromkeys(faults))) if faults else None

    def _strength(self, plain: str, tokens: list[str], held: Held) -> Fault | None:
        if STRENGTH_IDIOM_RE.search(plain):
            tokens = tokenize(STRENGTH_IDIOM_RE.sub(" ", plain))
        found = [
            t for t in dict.fromkeys(tokens) if t in STRONG_WORDS and STRENGTH_GROUP[t] not in held.strong
        ]
        conceded = UNIVERSAL_CONCESSION_RE.search(plain)
        if conceded and STRENGTH_GROUP["all"] not in held.strong:
            found.append(conceded.group(0).casefold())
        causal = CAUSAL_RE.search(normalise(plain))
        if causal and not held.causal:
            found.append(causal.group(0).strip(", "))
        return Fault("overclaim", tuple(found)) if found else None

    # ------------------------------------------------------------------ attribution

    def _attribution(self, sentence: str, held: Held, faults: list[Fault]) -> list[Fault]:
        """A sentence restates another claim of the run when it fails, or leans on words its claims lack,
        and that claim carries at least half its content words and would make it pass (and, for a sentence
        that passes, carries every word its own claims lack)."""
        plain = self._without_questions(prose.plain_text(TOOL_ASIDE_RE.sub(" ", sentence)))
        tokens = tokenize(plain)
        content = [w for w in content_words(tokens, set()) if not carried(w, self.question_stems)]
        lacking = [w for w in content if not carried(w, held.stems)]
        if not faults and not lacking:
            return faults
        index = self._stem_index()
        votes: dict[str, int] = {}
        for s in word_stems(tokens) - held.stems:
            for clm in index.get(s, ()):
                if clm not in held.ids:
                    votes[clm] = votes.get(clm, 0) + 1
        for clm, _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:3]:
            other = self._claim(clm)
            if sum(carried(w, other.stems) for w in content) * 2 < len(content):
                continue  # a word or a figure of that claim is not a restatement of it
            if not faults and not all(carried(w, other.stems) for w in lacking):
                continue
            if not self.faults(sentence, held.merged(other)):
                words = {w.casefold(): w for f in faults for w in f.words} or {w: w for w in lacking}
                return [Fault("misattributed", tuple(sorted(words.values())), (clm,))]
        return faults

    def _stem_index(self) -> dict[str, set[str]]:
        if self._index is None:
            index: dict[str, set[str]] = {}
            for clm in self.claims:
                for s in self._claim(clm).stems:
                    index.setdefault(s, set()).add(clm)
            self._index = index
        return self._index


def claim_texts(claim: dict[str, Any]) -> list[str]:
    """A claim's text and every quote of its evidence: what a sentence citing it may restate."""
    return [str(claim.get("text") or "")] + [
        str(e.get("quote") or "") for e in claim.get("evidence") or [] if isinstance(e, dict)
    ]
