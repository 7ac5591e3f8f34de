"""How a page's examples join the sentences around them, for the sentence candidates.

Documentation shows a command or a setting as an example block beside the prose that says what it does. A
short example is quoted with that prose, so that a claim holds both: after a sentence introducing it ("...,
e.g.: <form method="post">{% csrf_token %}"), under its label or numbered title ("Undo add", "Example 4.2.
Capturing all telnet traffic not from 10.0.0.5"), or inside a sentence it breaks in two ("Other source files
usually contain a line" / "(declare (usual-integrations))" / "near their beginning, ..."). Pure.
"""

from __future__ import annotations

import re

from research_engine.engine.extractive.text import (
    ANTECEDENT_MAX_WORDS,
    TERM_RE,
    TERMINAL_RE,
    is_claim_sentence,
    sentences,
)
from research_engine.engine.models import Passage

EXAMPLE_MAX_WORDS = 12  # a one-line example this short is quoted with the sentence introducing it
# An example's label in an examples list: three to five plain words, capitalised, then a colon; or, as a
# definition list's term over an example block, two to eight words and no colon ("Undo add").
EXAMPLE_LABEL_RE = re.compile(r"[A-Z][a-z][\w'\u2019/-]*(?:\s+[\w'\u2019/-]+){2,4}:")
EXAMPLE_NAME_RE = re.compile(r"[A-Z][a-z][\w'\u2019/-]*(?:\s+[\w'\u2019/.,-]+){1,7}")
ANNOUNCES_RE = re.compile(r"^(?:examples?|usage|syntax|synopsis|output|results?|samples?|notes?|see)\b", re.I)
# A numbered example's title (DocBook, Asciidoctor): "Example 4.1. A capture filter for telnet that captures
# traffic to and from a particular host" over "tcp port 23 and host 10.0.0.5".
EXAMPLE_TITLE_RE = re.compile(r"^Example\s+\d+(?:\.\d+)*\.?\s+(?:[^.!?]|[.!?](?=\S))+$")  # no sentence end
LABELLED_EXAMPLE_MAX_WORDS = 30  # an example block under its own label: a few command lines
# How a passage may end when its last sentence is finished (or leads into what follows): any other end
# ("... add the line") breaks a sentence off.
BROKEN_OFF_END_RE = re.compile(r"[.!?:;][\"'\u201d\u2019)\]]*$")
CODE_MARK_SHARE = 0.08  # a line this dense in markup or operators is code, not prose
FOLLOWING_RE = re.compile(r"\b(?:following|below)\b|\b(?:these|this|examples?)\W*:$", re.I)  # announces only


def is_code(passage: Passage) -> bool:
    """A code block, or a one-line example the extraction kept as text (`<form method="post">{% csrf_token
    %}`): no sentence end, and markup or operators in it."""
    if passage.kind == "code":
        return True
    text = passage.text
    marks = sum(text.count(c) for c in "{}<>=%@$;")
    return not TERMINAL_RE.search(text) and marks >= 2 and marks / len(text) >= CODE_MARK_SHARE


def labelled_examples(passages: list[Passage], index: int) -> list[str]:
    """The quotes an example's label at `index` heads: the label with the example block after it, and that
    with the first sentence the page says of it next (a callout, a paragraph); none when passage `index`
    is not a label over a short example."""
    label = passages[index]
    shown = passages[index + 1] if index + 1 < len(passages) else None
    titled = EXAMPLE_TITLE_RE.match(label.text) is not None  # "Example 4.1. A capture filter for telnet ..."
    if (
        label.kind not in ("paragraph", "list-item")
        or not (titled or TERM_RE.match(label.text))
        or shown is None
    ):
        return []
    if continues_past_example(passages, index):
        return []  # no label: a sentence the example sits in
    # A label ("Copy commit ID to clipboard:", "Undo add") heads an example of a few lines; a short sentence
    # leading into code ("Use of these flags is roughly equivalent to:") a one-line example, as elsewhere.
    named = titled or (
        not ANNOUNCES_RE.match(label.text)
        and (
            EXAMPLE_LABEL_RE.fullmatch(label.text) is not None
            or (EXAMPLE_NAME_RE.fullmatch(label.text) is not None and not label.text.endswith(":"))
        )
    )
    if not (named or introduces_example(label.text)) or not is_code(shown):
        return []
    if not quotable_example(shown.text, LABELLED_EXAMPLE_MAX_WORDS if named else EXAMPLE_MAX_WORDS):
        return []
    quotes = [f"{label.text} {shown.text}"]
    if not named:
        return quotes
    said = passages[index + 2] if index + 2 < len(passages) else None
    if said is not None and said.kind in ("paragraph", "list-item"):
        first = sentences(said.text)[:1]
        sentence = said.text[first[0][0] : first[0][1]] if first else ""
        if first and first[0][0] == 0 and is_claim_sentence(sentence):
            whole = f"{quotes[0]} {sentence}"
            if len(whole.split()) <= ANTECEDENT_MAX_WORDS:
                quotes.append(whole)
    return quotes


def lead_into(passages: list[Passage], index: int, rest: str) -> str:
    """The sentence right before the one-line example above passage `index`, when that passage goes on
    with the sentence the example sits in (`rest`, its first sentence): one ending with a colon
    ("Assuming origin is your upstream, using:"), or one broken off for the example ("Other source files
    usually contain a line", "For example,"), whose words with `rest`'s read as a sentence; else ""."""
    if index < 2 or not quotable_example(passages[index - 1].text):
        return ""
    before = passages[index - 2]
    if before.kind not in ("paragraph", "list-item"):
        return ""
    start, end = sentences(before.text)[-1]
    lead = before.text[start:end]
    if before.text.endswith(":"):
        return lead if is_claim_sentence(lead[:-1] + ".") and not FOLLOWING_RE.search(lead) else ""
    broken_off = continues_past_example(passages, index - 2) and not lead[:1].islower()  # no sentence's tail
    return lead if broken_off and is_claim_sentence(f"{lead} {rest}") else ""


def continues_past_example(passages: list[Passage], index: int) -> bool:
    """Passage `index` breaks off mid-sentence for a one-line example, and the passage after the example goes
    on with the sentence ("Other source files usually contain a line" / "(declare (usual-integrations))" /
    "near their beginning, which tells the compiler that ..."): GNU manuals set an example inside a
    sentence as a display of its own."""
    if index + 2 >= len(passages):
        return False
    broken, shown, rest = passages[index : index + 3]
    return (
        broken.kind in ("paragraph", "list-item")
        and not BROKEN_OFF_END_RE.search(broken.text)
        and is_code(shown)
        and quotable_example(shown.text)
        and rest.kind in ("paragraph", "list-item")
        and rest.text[:1].islower()
    )


def quotable_example(text: str, max_words: int = EXAMPLE_MAX_WORDS) -> bool:
    """A one-line example short enough to quote after its sentence, with nothing in it that reads as a
    sentence end (a prompt's "...", a "?" or "!")."""
    return len(text.split()) <= max_words and not re.search(r"[.!?](?:\s|$)|\.\.\.", text)


def introduces_example(sentence: str) -> bool:
    """ "As a shortcut, you can use the login_required() decorator:" before a code block: how a thing is
    done, stated in full; so is an example's short label in an examples list ("Copy commit ID to
    clipboard:", "Display the list of stashes:"). "The following settings are available:" announces, it
    does not state."""
    return (
        sentence.endswith(":")
        and not FOLLOWING_RE.search(sentence)
        and (is_claim_sentence(sentence[:-1] + ".") or EXAMPLE_LABEL_RE.fullmatch(sentence) is not None)
    )
