"""What answers a "how do I" in technical documentation: the names of options, settings, functions and
commands as documentation writes them (`mechanisms_named`), and the name a definition list's term gives
(`entry_name`). Read by the answer score (`answering`), the sentence candidates and the claim picking.

Pure functions of their text; no I/O.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache


class Mechanism(StrEnum):
    """What answers a "how do I" in technical documentation: the name of an option, a setting, a function
    or a command (issue 32: the answer is usually a term in a reference list, not prose)."""

    OPTION = "option"
    SETTING = "setting"
    FUNCTION = "function"
    COMMAND = "command"


# A token of each kind, as documentation writes it: "-y", "--max-old-space-size=SIZE", "-c:v"; SHARE_HISTORY,
# pool_pre_ping, CONN_MAX_AGE; test_client(), app.config.from_file; `compinit`, {% csrf_token %}.
MECHANISM_RE: dict[Mechanism, re.Pattern[str]] = {
    Mechanism.OPTION: re.compile(r"(?<![\w-])--?[A-Za-z][\w:-]*(?:\[[^\]\s]*\])?(?:=[^\s,;]+)?"),
    Mechanism.SETTING: re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[A-Z]{3,}[0-9]*\b"),
    Mechanism.FUNCTION: re.compile(r"\b[A-Za-z_][\w.]*\(\)|\b[a-z_]\w*(?:\.[A-Za-z_]\w*)+\b"),
    Mechanism.COMMAND: re.compile(r"`[^`\s]+[^`]*`|\{%\s*\w+[^%]*%\}"),
}


def entry_name(term: str) -> str | None:
    """The name a definition list's term gives, when the term is one name with at most its type, values or
    arguments after it ("mouse (bool)", "ignore-space (mixed) [no|all]", "-C <path>", "blame",
    "shared_buffers (integer)"); None for a term in words ("Valid bool values")."""
    term = " ".join(term.split())
    labelled = _DEFINITION_LABEL_RE.match(term)  # texinfo's "Function: void * gcry_malloc (size_t n)"
    term = term[labelled.end() :] if labelled else term
    match = (labelled and _C_DECLARATION_RE.match(term)) or _ENTRY_TERM_RE.match(term)
    return match.group("name") if match else None


_ENTRY_TERM_RE = re.compile(r"^(?P<name>(?:--?|\+)?[A-Za-z_][\w.:+-]*)(?:$|[\s,=]*[(\[<=,])")
# A definition's category as texinfo writes it before the name ("Function:", "Macro:", "Data type:").
_DEFINITION_LABEL_RE = re.compile(r"^[A-Z][a-z]+(?: [A-Za-z][a-z]+){0,2}: (?=\S)")
# A C declaration: its type words, then the name before the argument list ("void * gcry_malloc (size_t n)").
_C_DECLARATION_RE = re.compile(
    r"^(?:(?:const|unsigned|signed|struct|enum|union|static|extern|inline)\s+)*[A-Za-z_]\w*(?:\s*\*+\s*|\s+)"
    r"(?P<name>[A-Za-z_]\w*)\s*\("
)


def mechanisms_named(text: str, question: str = "") -> dict[Mechanism, list[str]]:
    """The option, setting, function and command names `text` writes, by kind; none that `question` itself
    writes (a question naming `SESSION_COOKIE_AGE` is answered by what it says of it, not by its name)."""
    asked = written_tokens(question)
    out: dict[Mechanism, list[str]] = {}
    for kind, pattern in MECHANISM_RE.items():
        found = [m.group(0) for m in pattern.finditer(text) if m.group(0).casefold() not in asked]
        if found:
            out[kind] = found
    return out


@lru_cache(maxsize=256)
def written_tokens(question: str) -> frozenset[str]:
    """What `question` writes, casefolded, as the mechanism patterns would cut it."""
    return frozenset(
        m.group(0).casefold() for pattern in MECHANISM_RE.values() for m in pattern.finditer(question)
    )
