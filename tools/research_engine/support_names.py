"""The names, code and figures a sentence writes, read against the claims it cites (`support`'s name and
number kinds): code tokens and how code is compared (`f()` is `f(arg)`, a path, an expression part by part, a
dotted name by its last parts when unambiguous), capitalised names and their possessives and compounds, a
lowercase word with a figure or one no dictionary lists, a hyphenated name coined or one part off the claims'
("allow-notify" for "also-notify"), the question's own name where the claims say "this module", a closed
compound for the claims' open one ("timeout" for "timing out"), and "zero" and "one" as figures where the
claims write another figure after the same word.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from research_engine import prose
from research_engine.support_words import (
    NEGATIONS,
    NUMBER_WORDS,
    ONLY,
    STOP,
    STRONG_WORDS,
    carried,
    dictionary_word,
    stem,
)

if TYPE_CHECKING:
    from research_engine.support import Held

CALL_RE = re.compile(r"[A-Za-z_][\w.]*\([^()]*\)")
POSSESSIVE_RE = re.compile(r"['\u2019]s?$")
# A command-line option written in prose, capitals too ("run with cmake -P"): code, compared as code.
OPTION_RE = re.compile(r"(?<=\s)--?[A-Za-z][\w-]*(?![\w-])")
# A word in square brackets is notation ("[L]", "[NC]", "[options]"), written as the claims write it.
BRACKETED_RE = re.compile(r"\[(?!CLM-)[A-Za-z][\w=,|-]*\]")
# Latin abbreviations read as dotted names ("e.g", "i.e"): never code.
ABBREVIATION_RE = re.compile(r"^(?:e\.g|i\.e|etc|cf|vs|viz|a\.k\.a)$", re.IGNORECASE)
# A path or a slashed module name ("/etc/zsh/zshenv", "zsh/db/gdbm", "zsh/mapfile"): code, compared as code.
# One slash between two words may be prose ("read/write"): held when both words are.
PATH_RE = re.compile(r"(?<![\w/.:])(?:/[\w.+-]+){2,}/?|(?<![\w/.:])[A-Za-z_][\w.+-]*(?:/[\w.+-]+)+")
LETTERS_AND_DIGITS_RE = re.compile(r"[a-z]+[0-9][a-z0-9]*")
# The parts of a code expression held one by one: command-line options and names.
CODE_PART_RE = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*|[A-Za-z_][\w.]*(?:\(\))?")
COMPOUND_RE = re.compile(r"(?<![\w./-])[A-Za-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-])")  # "also-notify"
SMALL_FIGURES = {"zero": 0.0, "one": 1.0}
SCALE_WORDS = frozenset({"hundred", "thousand", "million", "billion", "trillion", "dozen"})
NAME_PARTS_RE = re.compile(r"[._/-]+")  # "pam_unix" is "pam" and "unix"


def joined(tokens: list[str]) -> set[str]:
    """Each two neighbouring words of a text written as one, as written and with the first one's stem: a
    writer's closed compound ("timeout", "lookup") for the claims' open one ("timing out", "look up")."""
    out: set[str] = set()
    for first, second in zip(tokens, tokens[1:], strict=False):
        if first.isalpha() and second.isalpha():
            out.update((first + second, stem(first) + second))
    return out


def hyphenated(plain: str) -> set[str]:
    """The hyphenated names a text writes ("also-notify", "recursive-only")."""
    return {m.group(0) for m in COMPOUND_RE.finditer(plain)}


def figures_after(tokens: list[str]) -> dict[str, set[float]]:
    """A word's stem -> the figures a text writes right after it ("returns zero": {"return": {0.0}})."""
    out: dict[str, set[float]] = {}
    for before, token in zip(tokens, tokens[1:], strict=False):
        value = figure(token)
        if value is not None:
            out.setdefault(stem(before), set()).add(value)
    return out


def figure(token: str) -> float | None:
    """The figure one token writes ("zero", "three", "12"), or None."""
    if token in SMALL_FIGURES:
        return SMALL_FIGURES[token]
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    return float(token) if token.isdigit() else None


def code_in(text: str) -> list[str]:
    return list(_code_tokens(text))


@lru_cache(maxsize=4096)
def _code_tokens(text: str) -> tuple[str, ...]:  # a sentence is read by several checks
    found = (
        [m.group(0) for m in CALL_RE.finditer(text)]
        + prose.code_tokens(text)
        + [m.group(0).rstrip(".") for m in PATH_RE.finditer(prose.BACKTICK_RE.sub(" ", text))]
        + OPTION_RE.findall(prose.BACKTICK_RE.sub(" ", text))
        + BRACKETED_RE.findall(prose.BACKTICK_RE.sub(" ", text))
    )
    return tuple(t for t in found if not ABBREVIATION_RE.match(t.strip("`").rstrip(".")))


def code_base(token: str) -> str:
    """A code token as compared: call arguments and trailing punctuation dropped, case folded."""
    token = token.strip().strip("`").casefold()
    token = re.sub(r"\(.*\)$", "", token)
    return token.strip(".,;:")


def small_figures(tokens: list[str], held: Held) -> list[str]:
    """ "zero" and "one" are figures where the claims write another figure after the same word ("returns
    one" for "returns zero"); elsewhere "one" is a pronoun as often as a count."""
    out = []
    for i, token in enumerate(tokens[1:], start=1):
        if token not in SMALL_FIGURES or not tokens[i - 1].isalpha() or tokens[i - 1] in STOP:
            continue
        if i + 1 < len(tokens) and tokens[i + 1] in SCALE_WORDS:
            continue  # "one billion bytes": `prose.numbers`' figure
        theirs = held.figures_after.get(stem(tokens[i - 1]))
        if theirs and SMALL_FIGURES[token] not in theirs:
            out.append(token)
    return out


def unheld(
    plain: str, tokens: list[str], held: Held, question_plain: str, question_stems: set[str]
) -> list[str]:
    """The names and code a sentence writes that neither its claims nor the question hold."""
    missing = [
        t
        for t in code_in(plain)
        if not code_held(t, held, question_plain) and not asked_of(t, held, question_plain)
    ]
    missing += [
        n
        for n in prose.names(plain)
        if not name_held(n, held, question_plain) and not any(n.casefold() in code_base(t) for t in missing)
    ]
    missing += [  # a lowercase word with a figure in it ("httplib2", "utf8") names a thing
        t
        for t in tokens
        if LETTERS_AND_DIGITS_RE.fullmatch(t)
        and t not in held.stems
        and t not in question_stems
        and not any(t in code_base(c).casefold() for c in missing)
    ]
    missing += [  # a lowercase word outside English ("smtp", "paperorientation") names a thing
        t
        for t in terms(plain, tokens)
        if not carried(t, held.stems)
        and not carried(t, question_stems)
        and t not in held.joined
        and t.removesuffix("s") not in held.joined
        and not any(t in code_base(c).casefold() for c in missing)
    ]
    missing += [c for c in compound_names(plain, held, question_plain) if not any(c in m for m in missing)]
    missing = [t for t in dict.fromkeys(missing) if not any(t != o and t in o for o in missing)]
    return missing


def compound_names(plain: str, held: Held, question_plain: str) -> list[str]:
    """Hyphenated lowercase names ("qname-wait-recurse", "allow-notify") the claims do not write: one with
    a part no dictionary lists and no claim uses, or one that differs from a compound of the claims in one
    part ("allow-notify" for the claims' "also-notify"): a directive or option named wrong."""
    out = []
    for m in COMPOUND_RE.finditer(plain):
        name = m.group(0)
        if name.casefold() != name or prose.holds(name, held.plain) or prose.holds(name, question_plain):
            continue
        if name.replace("-", " ") in held.plain or name.replace("-", "") in held.words:
            continue  # "read-only" for "read only", "e-mail" for "email"
        parts = name.split("-")
        coined = any(not dictionary_word(p) and stem(p) not in held.stems for p in parts if p.isalpha())
        near = any(
            len(o.split("-")) == len(parts)
            and sum(a != b for a, b in zip(o.split("-"), parts, strict=True)) == 1
            for o in held.hyphenated
        )
        if coined or near:
            out.append(name)
    return out


def terms(plain: str, tokens: list[str]) -> list[str]:
    """The words a sentence writes in lowercase that are not English words (`dictionary_word`): terms
    and names, which a writer does not coin for a claim's word."""
    code = {code_base(t) for t in code_in(plain)}
    return [
        t
        for t in dict.fromkeys(tokens)
        if t.isalpha() and len(t) > 2 and t not in STOP and t not in code and not dictionary_word(t)
        and t not in NEGATIONS and t not in ONLY and t not in STRONG_WORDS
        and re.search(rf"(?<![\w.$%/-]){t}(?![\w.(/-])", plain)
    ]  # fmt: skip


def name_held(name: str, held: Held, question_plain: str) -> bool:
    """A name the claims or the question write; its possessive ("URL's") is the name, and a compound of
    it ("SQLite-specific") is held when the name is and the rest are words the claims use."""
    name = POSSESSIVE_RE.sub("", name)
    forms = [name]
    if not name.isupper():  # "Reader" where the claims write "Readers"; an acronym's "S" is a letter
        forms += [name + "s", name + "es"] + ([name[:-1]] if name.endswith("s") and len(name) > 3 else [])
    if any(prose.holds(form, text) for form in forms for text in (held.plain, question_plain)):
        return True
    parts = [p for p in name.split("-") if p]
    return len(parts) > 1 and all(
        prose.holds(p, held.plain)
        or prose.holds(p, question_plain)
        or (p.islower() and stem(p) in held.stems)
        for p in parts
    )


def asked_of(token: str, held: Held, question_plain: str) -> bool:
    """A name the question asks about with its kind ("the pam_unix module"), written where the claims say
    "this module": the subject restated. Not where the claims never name that kind (they are about
    something else), nor where they write a name it could be mistaken for (one sharing a part)."""
    base = code_base(token)
    if not base or not _kinds_named(base, question_plain) & held.stems:
        return False
    parts = set(NAME_PARTS_RE.split(base)) - {""}
    return not any(parts & set(NAME_PARTS_RE.split(c)) for c in held.code)


@lru_cache(maxsize=1024)
def _kinds_named(base: str, question_plain: str) -> frozenset[str]:
    """The stems of the words the question writes beside a name ("the pam_unix module": {"modul"})."""
    return frozenset(
        stem(w)
        for m in re.finditer(rf"(?<![\w.-])(\w+) {re.escape(base)} (\w+)", f" {question_plain} ")
        for w in m.groups()
        if w not in STOP and w.isalpha()
    )


def code_held(token: str, held: Held, question_plain: str) -> bool:
    base = code_base(token)
    if not base or base in held.code:
        return True
    if PATH_RE.fullmatch(base):
        if not base.startswith("/") and base.count("/") == 1:  # "read/write": two words, each held
            return all(
                re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", held.plain) for w in base.split("/") if w
            )
        return re.search(rf"(?<![\w/.]){re.escape(base)}(?![\w/])", held.plain) is not None
    if re.search(r"[\s=<>+*/,]", base):  # `CONN_MAX_AGE = 0`: an expression, held part by part
        parts = [p for p in CODE_PART_RE.findall(base) if len(p) > 1]  # an option ("-M") is a part
        return all(code_held(p, held, question_plain) or prose.holds(p, question_plain) for p in parts)
    if re.search(rf"(?<![\w.]){re.escape(base)}(?![\w(])", held.plain):  # written as a word, not a part
        return True
    parts = base.split(".")
    for n in range(1, len(parts)):  # a longer name: the claim's, with qualifiers the claims or question use
        tail = ".".join(parts[n:])
        if tail in held.code and all(
            prose.holds(p, held.plain) or prose.holds(p, question_plain) for p in parts[:n]
        ):
            return True
    ending = [c for c in held.code if c.endswith("." + base)]  # a shorter name: only when unambiguous
    return len(set(ending)) == 1
