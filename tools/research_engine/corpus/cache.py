"""The index of a corpus folder kept between starts, under the cache directory (never in the folder).

One directory per folder, `<cache_root>/corpus/<sha256 of the folder's path>/`, holding for every document
its size and modification time with what the index read from it (title, text, token counts) or why it was
skipped, in 64 shard files by the hash of the document's path. A start lists the folder (stat only), takes
each document whose size and time are unchanged from the cache, reads only the new and changed ones,
forgets the removed ones, and rewrites only the shards that changed: an index built once per folder
content, correct when files are added, changed or removed, and a one-file change costs one shard's write.
A shard written by another reader version, or damaged, is ignored and rebuilt; one that cannot be
written costs nothing but the next start's time.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from research_engine import __version__, bounded
from research_engine.corpus.files import Entry
from research_engine.corpus.index import CorpusPage
from research_engine.errors import BadInput
from research_engine.trace import atomic_write_text

log = logging.getLogger("research_engine.corpus")

# Bumped whenever a reader or the tokenizer reads differently: every cached index is rebuilt.
CACHE_FORMAT = 3
CACHE_CAP = 2 * 1024**3  # a 10,000-document folder's cache is a few hundred MB at most


SHARDS = 64


def cache_dir(cache_root: Path, root: Path) -> Path:
    return cache_root / "corpus" / hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:32]


def shard_of(rel: str) -> int:
    return hashlib.sha256(rel.encode("utf-8")).digest()[0] % SHARDS


def _version() -> str:
    return f"{CACHE_FORMAT}/{__version__}"


def load(cache_root: Path, root: Path) -> dict[str, Any]:
    """The cached entries of `root` by relative path ({} when there is no usable cache); a shard written by
    another version, for another folder, or damaged is left out (its documents are read again)."""
    folder = cache_dir(cache_root, root)
    entries: dict[str, Any] = {}
    for path in sorted(folder.glob("shard-*.json")) if folder.is_dir() else []:
        try:
            data = bounded.load_json(bounded.read_bytes(path, "artifact", cap=CACHE_CAP), str(path))
        except (BadInput, OSError) as exc:
            log.info("corpus: ignoring the index cache shard %s: %s", path, exc)
            continue
        if isinstance(data, dict) and data.get("version") == _version() and data.get("root") == str(root):
            shard = data.get("entries")
            if isinstance(shard, dict):
                entries.update(shard)
    return entries


def fresh(cached: dict[str, Any], entry: Entry) -> dict[str, Any] | None:
    """The cached record of `entry` when the file is unchanged (same size and modification time)."""
    hit = cached.get(entry.rel)
    if isinstance(hit, dict) and hit.get("size") == entry.size and hit.get("mtime_ns") == entry.mtime_ns:
        return hit
    return None


def page_record(entry: Entry, page: CorpusPage) -> dict[str, Any]:
    return {
        "size": entry.size,
        "mtime_ns": entry.mtime_ns,
        "title": page.title,
        "text": page.text,
        "tokens": dict(page.tokens),
        "title_terms": sorted(page.title_terms),
    }


def skip_record(entry: Entry, reason: str) -> dict[str, Any]:
    return {"size": entry.size, "mtime_ns": entry.mtime_ns, "skipped": reason}


def page_from(rel: str, record: dict[str, Any]) -> CorpusPage:
    tokens: Counter[str] = Counter({str(k): int(v) for k, v in (record.get("tokens") or {}).items()})
    return CorpusPage(
        rel,
        str(record.get("title") or rel),
        str(record.get("text") or ""),
        tokens,
        sum(tokens.values()),
        frozenset(str(t) for t in record.get("title_terms") or ()),
    )


def dirty_shards(cached: dict[str, Any], records: dict[str, Any]) -> set[int]:
    """The shards whose content differs between the cache and this start's records."""
    changed = {rel for rel, record in records.items() if cached.get(rel) is not record}
    changed |= set(cached) - set(records)
    return {shard_of(rel) for rel in changed}


def save(cache_root: Path, root: Path, records: dict[str, Any], shards: set[int]) -> None:
    """Write the changed shards (best effort: a cache that cannot be written is only a slower next start)."""
    folder = cache_dir(cache_root, root)
    by_shard: dict[int, dict[str, Any]] = {n: {} for n in shards}
    for rel, record in records.items():
        if shard_of(rel) in by_shard:
            by_shard[shard_of(rel)][rel] = record
    for number, entries in sorted(by_shard.items()):
        path = folder / f"shard-{number:02d}.json"
        document = {"version": _version(), "root": str(root), "entries": entries}
        try:
            atomic_write_text(path, json.dumps(document, ensure_ascii=False, separators=(",", ":")))
        except (OSError, BadInput) as exc:
            log.info("corpus: could not write the index cache %s: %s", path, exc)
            return
