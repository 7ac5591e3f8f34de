"""The things a clause enumerates: "threads, processes and asyncio", "between X and Y", "X vs Y".

Owns `enumeration` (the items and where they end; an item with its own article whole, "a tab page", or
naming its kind as the first does, "GNU m4 and System V m4"; the items' shared head left off, "json and
jsonb data types"), `join_items` and `of_each` ("the maximum size of A and of B in C": one clause per thing).
Pure text; `facets` reads a clause's enumeration as the entities it asks about.
"""

from __future__ import annotations

import re

from research_engine.terms import STOP_WORDS

_ITEM = r"[\w.'+#=-]+(?: [\w.'+#=-]+)?"
_LIST_RE = re.compile(
    rf"(?<![\w.'+#-])(?P<first>{_ITEM})(?P<middle>(?:, {_ITEM})*),? (?:and|or) (?P<last>{_ITEM})"
)
_VERSUS_RE = re.compile(
    rf"(?<![\w.'+#-])(?P<first>{_ITEM}) (?:vs\.?|versus) (?P<last>{_ITEM})", re.IGNORECASE
)
_PLURAL_HEAD_RE = re.compile(r"[a-z]{2,}[^s]s")  # "types", "formats": a kind the items share, in the plural
_ARTICLE_LED_RE = re.compile(r"^(?:a|an|the)\s", re.IGNORECASE)
_CHOICE_RE = re.compile(r"\b(between|among|choose|choosing|compare|comparing|differences?|versus|vs)\b", re.I)

# Words that end an enumeration item: "between threads" -> "threads", "asyncio for" -> "asyncio".
EDGE_WORDS = frozenset(
    """a an the for in on to with of when at by from between among into about over under versus vs and or
    than as is are be has have had should could would can do does how what why which who where whether
    choose choosing select decide pick compare comparing use using""".split()  # noqa: SIM905
)


def join_items(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _trim_item(item: str, *, leading: bool) -> str:
    parts = item.split()
    if leading:
        while parts and parts[0].lower() in EDGE_WORDS:
            parts.pop(0)
    while parts and parts[-1].lower() in EDGE_WORDS:
        parts.pop()
    return " ".join(parts)


# Items given as examples illustrate what the clause names ("a keyword such as node, edge or graph", "builtins
# like cd, export and alias", "(e.g. quotes, dollars and backslashes)"): the asker wants none of them asked
# about on its own.
_EXAMPLES_RE = re.compile(
    r"\b(?:such as|like|e\.g\.|eg\.|for example|for instance|including)[,:]?\s+(?:(?:a|an|the)\s+)?", re.I
)
_MASK = "\x1f"  # no item's character: a list of examples blanked out keeps every other position


def _examples_blanked(clause: str) -> str:
    """`clause` with each list of examples blanked out, so that no enumeration is read in it; only its
    "such as" when a choice is made among what the examples illustrate ("How do I choose between compression
    formats such as gzip, bzip2 and xz?": the examples are what is chosen between)."""
    blanked = clause
    for marker in _EXAMPLES_RE.finditer(clause):
        listed = _LIST_RE.match(clause, marker.end())
        if listed is None:
            continue
        before = clause[: marker.start()].rstrip(" ,(")
        choices = list(_CHOICE_RE.finditer(before))
        # What is chosen among, when the choice names it: a few words, none a function word ("image formats")
        among = before[choices[-1].end() :].lower().split() if choices else []
        if choices and len(among) <= 3 and not set(among) & (EDGE_WORDS | STOP_WORDS):
            listed = marker  # only "such as" goes: the first item is "PNG", not "like PNG"
        blanked = blanked[: listed.start()] + _MASK * len(listed.group(0)) + blanked[listed.end() :]
    return blanked


def enumeration(clause: str) -> tuple[list[str], int] | None:
    """(items, end) of the enumeration in a clause ("X, Y and Z", "between X and Y", "X vs Y"); never a list
    of examples ("such as X, Y and Z")."""
    clause = _examples_blanked(clause)
    for regex in (_VERSUS_RE, _LIST_RE):
        for m in regex.finditer(clause):
            middle = [p.strip() for p in (m.groupdict().get("middle") or "").split(",") if p.strip()]
            raw = [m.group("first"), *middle, m.group("last")]
            items = [_trim_item(p, leading=True) for p in raw]  # "between threads" -> "threads"
            if any(not i for i in items) or len({i.lower() for i in items}) != len(items):
                continue
            if regex is _LIST_RE and not middle and not _CHOICE_RE.search(clause):
                continue  # "X and Y" alone is as often one thing ("research and development")
            end = m.start("last") + m.group("last").find(items[-1]) + len(items[-1])
            if _ARTICLE_LED_RE.match(raw[-1]):
                # "a buffer, a window and a tab page", "a minor release and a major release": an item with
                # its own article ends where its noun does, past the two words an item is matched with.
                more = re.match(r"(?:\s+[a-z][\w-]*){1,2}", clause[end:])
                said = more.group(0).split() if more else []
                for word in said:
                    if word in EDGE_WORDS or word in STOP_WORDS:
                        break
                    items[-1] += f" {word}"
                    end = clause.index(word, end) + len(word)
                # ... and so does the first, back to its article: "between a virtual alias domain and a ...".
                for word in reversed(clause[: m.start("first")].split()[-2:]):
                    if word.lower() in EDGE_WORDS or word.lower() in STOP_WORDS or not word.isalpha():
                        break
                    items[0] = f"{word} {items[0]}"
                return items, end
            parallel = _parallel_end(clause, items, end)
            if parallel:
                # "GNU m4 and System V m4": the last item names the same kind of thing as the first, whole.
                items[-1] = clause[m.start("last") + m.group("last").find(items[-1]) : parallel]
                return items, parallel
            head = items[-1].split()
            followed = re.match(r"\s+[a-z][\w-]*", clause[end:])
            shared = (followed is not None and followed.group(0).strip().lower() not in EDGE_WORDS) or (
                len(head) == 2 and _PLURAL_HEAD_RE.fullmatch(head[1]) is not None
            )
            if (
                len(head) == 2
                and all(len(i.split()) == 1 for i in items[:-1])
                and head[0] != items[0]
                and shared
            ):
                # "json and jsonb data types", "json and jsonb types": "data" and "types" are the items'
                # shared head, not part of the last one ("VACUUM and VACUUM FULL" keeps its variant, "Bash
                # and POSIX sh" its name).
                items[-1] = head[0]
                end = m.start("last") + m.group("last").find(head[0]) + len(head[0])
            return items, end
    return None


def _parallel_end(clause: str, items: list[str], end: int) -> int | None:
    """Where the last item ends when it names its kind as the first item does, past the two words an item is
    matched with: "GNU m4 and System V m4" -> after the second "m4"; else None."""
    kind = items[0].split()
    if len(kind) < 2 or len(items[-1].split()) < 2:
        return None
    more = re.match(rf"(?:\s+[\w.+#-]+)?\s+{re.escape(kind[-1])}(?![\w.+#-])", clause[end:])
    if more is None or any(w.lower() in EDGE_WORDS for w in more.group(0).split()[:-1]):
        return None
    return end + more.end()


_OF_EACH_RE = re.compile(
    r"^(?P<head>.+?\bof\s+)(?P<a>.+?)\s+and\s+of\s+(?P<b>.+?)(?P<tail>\s+(?:in|on|for|with)\s+\S.*)?$",
    re.IGNORECASE,
)


def of_each(clause: str) -> list[str]:
    """ "the maximum size of a single table and of a single field value in PostgreSQL": one clause per
    thing, each with the head and the scope."""
    m = _OF_EACH_RE.match(clause)
    if not m:
        return [clause]
    tail = m.group("tail") or ""
    return [f"{m.group('head')}{m.group('a')}{tail}", f"{m.group('head')}{m.group('b')}{tail}"]
