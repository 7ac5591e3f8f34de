"""The conditional-revalidation store: validators and bodies of earlier 200 responses, per URL.

Layout under the cache directory (`Settings.cache_root`: `RESEARCH_ENGINE_CACHE_DIR`, default
`~/.cache/research-engine`):

    http/entries/<sha256 of the URL>.json   url, etag, last-modified, content type, headers, body digest
    http/bodies/<sha256 of the body>         the decoded body, content-addressed (stored once)

Only responses that carry a validator (ETag or Last-Modified) are stored: without one a
repeat fetch could not be answered with 304 anyway. Writes are atomic, so concurrent
clients never see a torn entry; the last writer of an entry wins, which is harmless
because any complete entry is a valid validator/body pair.

This module never talks to the network; the client decides when to consult it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

from research_engine import bounded
from research_engine.errors import BadInput, StorageFailed
from research_engine.settings import default_cache_root
from research_engine.trace import atomic_write_bytes, atomic_write_text

log = logging.getLogger("research_engine.net.cache")


@dataclass
class CacheEntry:
    url: str
    body_sha256: str
    stored_at: str
    etag: str | None = None
    last_modified: str | None = None
    content_type: str | None = None
    charset: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)

    def conditional_headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.etag:
            out["If-None-Match"] = self.etag
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out


class RevalidationCache:
    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_root()
        self.entries = self.root / "http" / "entries"
        self.bodies = self.root / "http" / "bodies"

    def _entry_path(self, url: str) -> Path:
        return self.entries / f"{hashlib.sha256(url.encode('utf-8')).hexdigest()}.json"

    def lookup(self, url: str) -> tuple[CacheEntry, bytes] | None:
        """The stored entry and body for `url`; None when absent or damaged (a damaged entry is a miss)."""
        path = self._entry_path(url)
        if not path.is_file():
            return None
        try:
            data = bounded.load_json(bounded.read_bytes(path), "cache entry")
            entry = CacheEntry(**data)
            body = bounded.read_bytes(self.bodies / entry.body_sha256, "snapshot")
        except (BadInput, OSError, ValueError, TypeError):
            return None
        if entry.url != url or hashlib.sha256(body).hexdigest() != entry.body_sha256:
            return None
        return entry, body

    def store(self, entry: CacheEntry, body: bytes) -> None:
        """Keep `body` for revalidation. A cache that cannot be written (its disk full) is only logged: it
        saves a download next time, and the fetch that has the body already succeeded."""
        if not (entry.etag or entry.last_modified):
            return
        body_path = self.bodies / entry.body_sha256
        try:
            if not body_path.exists():
                atomic_write_bytes(body_path, body)
            atomic_write_text(self._entry_path(entry.url), json.dumps(asdict(entry), ensure_ascii=False))
        except StorageFailed as exc:
            log.warning("revalidation cache not written: %s", exc.message)
