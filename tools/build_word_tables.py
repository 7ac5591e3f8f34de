"""Build the sentence-support check's four word tables from WordNet 3.0: the derived words
(`research_engine/support_derived_words.txt`), the common words (`research_engine/support_common_words.txt`),
the antonyms (`research_engine/support_antonym_words.txt`), the spelling variants
(`research_engine/support_spelling_variants.txt`) and the dictionary
(`research_engine/support_dictionary_words.txt`).

    python tools/build_word_tables.py WORDNET_DICT_DIR [--out-dir DIR]

WORDNET_DICT_DIR is WordNet's database directory, e.g. from Debian's wordnet-base package:
`apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb x` gives `x/usr/share/wordnet`.

Derived words. A writer restates a claim with another part of speech of its words: "verification" for
"verifying", "creation" for "creates", which the stemmer leaves apart. The table holds, for each word, the
words WordNet derives from it (its `+` pointers, derivationally related forms, and `\\` pointers, an
adverb's adjective) in one of the word's `SENSES` most frequent senses that WordNet's sense-tagged corpus
(`cntlist.rev`) has seen at least `MIN_TAGGED` times; never an antonym (WordNet's `!` pointer).

Common words. Every single word WordNet's sense-tagged corpus has seen at least `MIN_TAGGED` times: the
words of ordinary English. A word outside it ("ksh", "libswscale") is a term or a name, which a writer does
not paraphrase.

Antonyms. A writer who puts a word's opposite where the claim has the word ("disabled" for "enabled",
"decrease" for "increase") contradicts it. The table pairs the words WordNet marks as antonyms (its `!`
pointers, word to word) when each is in one of its word's `ANTONYM_SENSES` most frequent senses; antonymy
is symmetric: each pair is written both ways. An adjective's satellites against its head's antonym
("required", a satellite of "obligatory", against "optional") were measured and left out: they brought no
unfaithful sentence in and refused a faithful one (bench/results/faithfulness-s5.md).

Spelling variants. A writer may spell a word the British way where the documentation spells it the American
way, or the other way round ("behaviour" for "behavior", "initialise" for "initialize"). The table maps each
British spelling to the American one where WordNet lists both in one synset and one turns into the other by a
regular correspondence of the two spellings (`SPELLING_RULES`: -our/-or, -ise/-ize, -isation/-ization,
-yse/-yze, -tre/-ter, -ogue/-og, -ence/-ense, -amme/-am), as the stemmer's stems: the check folds a stem
through it before anything else reads it, so the other three tables are written in the folded stems.

Dictionary. Every single word WordNet lists (its index files and its exception lists, the irregular forms),
less the common words: a lowercase word outside both, and outside the closed classes WordNet leaves out
(prepositions, conjunctions, pronouns), is a term or a name ("smtp", "paperorientation"), which a writer
does not coin for a claim's word.

Synonyms (words WordNet puts in one synset) were measured too and left out: they let unfaithful sentences
through (bench/results/faithfulness-generalise.md). Both outputs are plain text with WordNet's licence in a
header, written as the check's stems (`research_engine.support_words.stem`, so that loading them is a split:
rebuild them when the stemming changes): the derived words one line per stem, `stem derived derived ...`;
the common words a few per line.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

from research_engine.support_words import raw_stem  # the check's own stems: loading the tables is a split

SENSES = 2
ANTONYM_SENSES = 3  # an antonym pair's senses: technical words' senses are rarely in the tagged corpus
MIN_TAGGED = 3  # a derivation's sense
COMMON_MIN_TAGGED = 1  # a common word
ALL_POS = ("noun", "verb", "adj", "adv")
POS_LETTER = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
SENSE_KEY_POS = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}
WORD_RE = re.compile(r"^[a-z]{3,}$")
# British -> American spelling correspondences (the British side first), applied once anywhere in a word.
SPELLING_RULES = (
    ("our", "or"), ("isation", "ization"), ("ise", "ize"), ("yse", "yze"), ("tre", "ter"), ("ogue", "og"),
    ("ence", "ense"), ("amme", "am"),
)  # fmt: skip

LICENCE = """\
# {what}: from WordNet 3.0 by tools/build_word_tables.py (its docstring says how).
#
# WordNet Release 3.0. This software and database is being provided to you, the LICENSEE, by Princeton
# University under the following license. By obtaining, using and/or copying this software and database,
# you agree that you have read, understood, and will comply with these terms and conditions.: Permission
# to use, copy, modify and distribute this software and database and its documentation for any purpose
# and without fee or royalty is hereby granted, provided that you agree to comply with the following
# copyright notice and statements, including the disclaimer, and that the same appear on ALL copies of the
# software, database and documentation, including modifications that you make for internal use or for
# distribution. WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS SOFTWARE AND
# DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR
# IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR
# WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED
# SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR
# OTHER RIGHTS. The name of Princeton University or Princeton may not be used in advertising or publicity
# pertaining to distribution of the software and/or database. Title to copyright in this software,
# database and any associated documentation shall at all times remain with Princeton University and
# LICENSEE agrees to preserve same.
"""


def read_synsets(wordnet: Path) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str, int, int]]]]:
    """Each synset's words, and its pointers (symbol, target synset, source word, target word; 0 for the
    whole synset), keyed "pos:offset"."""
    words: dict[str, list[str]] = {}
    pointers: dict[str, list[tuple[str, str, int, int]]] = {}
    for pos in ALL_POS:
        for line in (wordnet / f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" "):
                continue  # the licence header
            fields = line.split(" | ")[0].split()
            key = f"{pos}:{fields[0]}"
            count = int(fields[3], 16)
            words[key] = [fields[4 + 2 * i].lower() for i in range(count)]
            at = 4 + 2 * count
            n_pointers = int(fields[at])
            out = []
            for i in range(n_pointers):
                symbol, offset, letter, source_target = fields[at + 1 + 4 * i : at + 5 + 4 * i]
                out.append(
                    (
                        symbol,
                        f"{POS_LETTER[letter]}:{offset}",
                        int(source_target[:2], 16),
                        int(source_target[2:], 16),
                    )
                )
            pointers[key] = out
    return words, pointers


def read_senses(wordnet: Path) -> dict[tuple[str, str], list[str]]:
    """(word, pos) -> its synsets, most frequent sense first (WordNet's index order)."""
    out: dict[tuple[str, str], list[str]] = {}
    for pos in ALL_POS:
        for line in (wordnet / f"index.{pos}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" "):
                continue
            fields = line.split()
            n_synsets = int(fields[2])
            out[(fields[0], pos)] = [f"{pos}:{o}" for o in fields[-n_synsets:]]
    return out


def read_tag_counts(wordnet: Path) -> dict[tuple[str, str, int], int]:
    """(word, pos, sense number) -> how often the sense-tagged corpus has the word in that sense."""
    out: dict[tuple[str, str, int], int] = defaultdict(int)
    for line in (wordnet / "cntlist.rev").read_text(encoding="latin-1").splitlines():
        key, sense_number, count = line.split()
        lemma, _, rest = key.partition("%")
        out[(lemma, SENSE_KEY_POS[rest[0]], int(sense_number))] += int(count)
    return out


def build(wordnet: Path) -> dict[str, set[str]]:
    words, pointers = read_synsets(wordnet)
    senses = read_senses(wordnet)
    tagged = read_tag_counts(wordnet)

    def common_senses(word: str, pos: str) -> list[str]:
        return [
            synset
            for n, synset in enumerate(senses.get((word, pos), [])[:SENSES], start=1)
            if tagged.get((word, pos, n), 0) >= MIN_TAGGED
        ]

    antonyms: set[tuple[str, str]] = set()
    for key, found in pointers.items():
        for symbol, target, source, target_word in found:
            if symbol == "!" and source and target_word:
                a, b = words[key][source - 1], words[target][target_word - 1]
                antonyms |= {(a, b), (b, a)}

    table: dict[str, set[str]] = defaultdict(set)
    for (word, pos), _ in senses.items():
        if not WORD_RE.match(word):
            continue
        for synset in common_senses(word, pos):
            for symbol, target, source, target_word in pointers[synset]:
                if symbol not in ("+", "\\") or not source or not target_word:
                    continue  # a derivation or a pertainym, word to word
                if words[synset][source - 1] != word:
                    continue
                other = words[target][target_word - 1]
                if WORD_RE.match(other):
                    table[word].add(other)
                    table[other].add(word)
    for word in list(table):
        table[word] = {o for o in table[word] if (word, o) not in antonyms and o != word}
    return {w: others for w, others in table.items() if others}


def antonyms(wordnet: Path) -> dict[str, set[str]]:
    words, pointers = read_synsets(wordnet)
    senses = read_senses(wordnet)

    def frequent(word: str, synset: str) -> bool:
        return synset in senses.get((word, synset.split(":")[0]), [])[:ANTONYM_SENSES]

    def clean(word: str) -> str:
        return word.split("(")[0]  # an adjective's position marker: "more(a)"

    table: dict[str, set[str]] = defaultdict(set)

    def pair(a: str, a_synset: str, b: str, b_synset: str) -> None:
        if WORD_RE.match(a) and WORD_RE.match(b) and frequent(a, a_synset) and frequent(b, b_synset):
            table[a].add(b)
            table[b].add(a)

    for key, found in pointers.items():
        for symbol, target, source, target_word in found:
            if symbol == "!" and source and target_word:
                pair(clean(words[key][source - 1]), key, clean(words[target][target_word - 1]), target)
    return table


def spelling_variants(wordnet: Path) -> dict[str, str]:
    """British spelling -> American, for two words of one synset that one of `SPELLING_RULES` turns the
    one into the other ("behaviour" -> "behavior")."""
    words, _ = read_synsets(wordnet)
    out: dict[str, str] = {}
    for members in words.values():
        single = {w for w in members if WORD_RE.match(w)}
        for british in single:
            for old, new in SPELLING_RULES:
                at = british.find(old)
                while at >= 0:
                    american = british[:at] + new + british[at + len(old) :]
                    if american in single:
                        out[british] = american
                    at = british.find(old, at + 1)
    return out


def dictionary_words(wordnet: Path) -> set[str]:
    """Every single word WordNet lists, base forms and the irregular forms of its exception lists."""
    out = set()
    for pos in ALL_POS:
        for line in (wordnet / f"index.{pos}").read_text(encoding="latin-1").splitlines():
            if not line.startswith(" ") and WORD_RE.match(line.split()[0]):
                out.add(line.split()[0])
        for line in (wordnet / f"{pos}.exc").read_text(encoding="latin-1").splitlines():
            out.update(w for w in line.split() if WORD_RE.match(w))
    return out


def common_words(wordnet: Path) -> list[str]:
    tagged = read_tag_counts(wordnet)
    return sorted(
        {word for (word, _, _), count in tagged.items() if count >= COMMON_MIN_TAGGED and WORD_RE.match(word)}
    )


def stem_lines(related: dict[str, set[str]]) -> list[str]:
    """A table's lines: a stem, then the other stems related to it; stems related to none left out."""
    return [f"{s} {' '.join(sorted(others - {s}))}" for s, others in sorted(related.items()) if others - {s}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "wordnet", type=Path, help="WordNet 3.0's database directory (data.noun, index.verb...)"
    )
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent / "research_engine")
    args = parser.parse_args(argv)
    if not (args.wordnet / "data.verb").is_file() or not (args.wordnet / "cntlist.rev").is_file():
        print(f"build_word_tables: {args.wordnet} is not WordNet 3.0's database directory", file=sys.stderr)
        return 2
    pairs = spelling_variants(args.wordnet).items()
    variants = {raw_stem(b): raw_stem(a) for b, a in pairs if raw_stem(b) != raw_stem(a)}

    def stem(word: str) -> str:  # the check's stem, as `support_words.stem` folds it through the variants
        s = raw_stem(word)
        return variants.get(s, s)

    derived: dict[str, set[str]] = defaultdict(set)
    for word, others in build(args.wordnet).items():
        derived[stem(word)].update(stem(o) for o in others)
    common = sorted({stem(word) for word in common_words(args.wordnet)})
    dictionary = sorted({stem(word) for word in dictionary_words(args.wordnet)} - set(common))
    opposite: dict[str, set[str]] = defaultdict(set)
    for word, others in antonyms(args.wordnet).items():
        opposite[stem(word)].update(stem(o) for o in others)
    outputs = {
        "support_derived_words.txt": (
            "Derived words for the sentence-support check, as the check's stems (one line per stem: the "
            "stem, then the stems of the words WordNet derives from it in a common sense)",
            stem_lines(derived),
        ),
        "support_common_words.txt": (
            "The common words of English for the sentence-support check (those WordNet's sense-tagged "
            "corpus has seen), as the check's stems",
            [" ".join(common[i : i + 12]) for i in range(0, len(common), 12)],
        ),
        "support_antonym_words.txt": (
            "Antonyms for the sentence-support check, as the check's stems (one line per stem: the stem, "
            "then the stems of its antonyms in WordNet, in a frequent sense)",
            stem_lines(opposite),
        ),
        "support_dictionary_words.txt": (
            "The other words WordNet lists (not in support_common_words.txt), for the sentence-support "
            "check, as the check's stems",
            [" ".join(dictionary[i : i + 12]) for i in range(0, len(dictionary), 12)],
        ),
        "support_spelling_variants.txt": (
            "British spellings for the sentence-support check, as the stemmer's stems (a line per stem: "
            "the British spelling's stem, then the American one's, the two in one WordNet synset)",
            [f"{b} {a}" for b, a in sorted(variants.items())],
        ),
    }
    for name, (what, lines) in outputs.items():
        out = args.out_dir / name
        out.write_text(LICENCE.format(what=what) + "\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {out}: {len(lines)} lines, {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
