"""What the objective quotes stays as written: a message the user saw ('InFailedSqlTransaction: current
transaction is aborted, commands ignored ...'), an option's name ('scrolloff').

Owns `sealed` (the quoted spans' spaces and clause punctuation swapped for private-use characters, so no
rule that splits clauses, joins a situation's sentences with ", and", or reads an enumeration acts inside
a quote, while its words stay words) and `unsealed` (the text as written again). `facets` seals the
objective before reading it and unseals every facet it returns.
"""

from __future__ import annotations

import re

# A quotation: an opening mark at the start or after a space or bracket, the same mark closing before a space,
# punctuation or the end ("don't", "Sphinx's" and "ge"andert" open none).
# A code span in backticks is one too ("`git status -s`").
_QUOTED_RE = re.compile(
    r"(?:^|(?<=[\s(\[]))(?P<mark>[\"'`\u201c\u2018])(?P<said>[^\"'`\u201c\u201d\u2018\u2019]*?\S)"
    r"(?P<close>[\"'`\u201d\u2019])(?=$|[\s.,;:!?)\]])"
)
_CLOSING = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}
# A shell's special parameter ("$?", "$!", "$#"): its mark is a name's, never a question's or a clause's end.
_SHELL_PARAMETER_RE = re.compile(r"(?<![\w$])\$[?!;,.:](?=$|[\s)\]]|[.,;:!?](?:\s|$))")
# Inside a quote: its spaces, and the punctuation that ends a sentence or clause elsewhere ("E37: No write",
# "timed out, nothing received", "Version mismatch error. This is"); "ip.src" and "::" keep theirs.
_SEALED_CHARS = {
    " ": "\ue000",
    ".": "\ue001",
    ",": "\ue002",
    ";": "\ue003",
    ":": "\ue004",
    "?": "\ue005",
    "!": "\ue006",
}
# A quotation that ends a sentence ("... comes from an older release.' how do I fix this"): its sealed end
# mark and closing quote, as a lookbehind.
ENDS_SENTENCE = "(?<=[\ue001\ue005\ue006][\"'\u201d\u2019])"
_OPEN_PUNCTUATION_RE = re.compile(r"[;?!]|[.,:](?=\s|$)")
_UNSEALED = {sealed: said for said, sealed in _SEALED_CHARS.items()}
_SEAL_RE = re.compile("[" + "".join(_UNSEALED) + "]")


def sealed(text: str) -> str:
    """`text` with each quotation's spaces and clause punctuation swapped for private-use characters."""

    def seal(m: re.Match[str]) -> str:
        if _CLOSING[m.group("mark")] != m.group("close"):
            return m.group(0)
        said = _OPEN_PUNCTUATION_RE.sub(lambda p: _SEALED_CHARS[p.group(0)], m.group("said"))
        return f"{m.group('mark')}{said.replace(' ', _SEALED_CHARS[' '])}{m.group('close')}"

    text = _SHELL_PARAMETER_RE.sub(lambda m: "$" + _SEALED_CHARS[m.group(0)[1]], text)
    return _QUOTED_RE.sub(seal, text)


def unsealed(text: str) -> str:
    """`text` as written: what `sealed` swapped, back."""
    return _SEAL_RE.sub(lambda m: _UNSEALED[m.group(0)], text)
