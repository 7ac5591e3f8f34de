"""The folders of `run --corpus DIR` served in-process for one run: the reusable piece `batch` calls too.

    with serve_corpora(["~/papers", "~/notes"], cache_root=settings.cache_root) as served:
        served.search_urls   # ["http://127.0.0.1:41233/search", ...]: the run's corpus search backends
        served.allow_hosts   # ["127.0.0.1:41233", ...]: allowed for this run, and only these
        served.records()     # run.json's `corpus`: each folder's path, file-list digest, URL, counts

Each folder gets its own `CorpusServer` on an ephemeral loopback port (`ports` asks for given ones: a
resumed run serves on the ports its URLs name). Nothing else private becomes reachable: the allowed
entries are exactly these HOST:PORT pairs. A replay starts no server at all: its exchanges come from
the cassette, under the URLs the recording used (`from_records`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from research_engine.corpus.collection import Corpus
from research_engine.corpus.server import CorpusServer
from research_engine.errors import BadInput

LOOPBACK = "127.0.0.1"


@dataclass
class ServedCorpora:
    """The corpus folders of one run: their base URLs and what run.json keeps of each."""

    entries: list[dict[str, Any]] = field(default_factory=list)  # path, digest, url, documents, skipped
    servers: list[CorpusServer] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        return [str(e["url"]) for e in self.entries]

    @property
    def search_urls(self) -> list[str]:
        return [f"{url}/search" for url in self.urls]

    @property
    def allow_hosts(self) -> list[str]:
        return [urlsplit(url).netloc for url in self.urls]

    def records(self) -> list[dict[str, Any]]:
        return [dict(e) for e in self.entries]

    def owns(self, url: str) -> bool:
        """Whether `url` is a document of one of these folders (its PDFs and Word files need no --pdf)."""
        return any(url.startswith(base + "/") for base in self.urls)

    def copy(self) -> ServedCorpora:
        """The same folders and URLs without the servers: a run using them leaves them running."""
        return ServedCorpora(entries=self.records())

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers = []

    @classmethod
    def from_records(cls, records: Sequence[dict[str, Any]]) -> ServedCorpora:
        """The corpora a recording served, without a server (a replay reads them from the cassette)."""
        return cls(entries=[dict(r) for r in records if isinstance(r, dict) and r.get("url")])


def check_folders(folders: Sequence[str | Path]) -> list[Path]:
    """The folders resolved, each an existing directory, without repeats; BadInput naming a bad one."""
    out: list[Path] = []
    for folder in folders:
        path = Path(folder).expanduser().resolve()
        if not path.is_dir():
            raise BadInput(f"--corpus {folder}: no such directory", code="bad-corpus", field="corpus")
        if path not in out:
            out.append(path)
    return out


def start_corpora(
    folders: Sequence[str | Path], *, ports: Sequence[int | None] = (), cache_root: Path | None = None
) -> ServedCorpora:
    """Index and serve each folder on loopback (the caller stops them: `ServedCorpora.stop`)."""
    served = ServedCorpora()
    try:
        for number, folder in enumerate(check_folders(folders)):
            port = ports[number] if number < len(ports) else None
            corpus = Corpus(folder, cache_root=cache_root)
            try:
                server = CorpusServer(folder, host=LOOPBACK, port=port or 0, corpus=corpus).start()
            except BadInput as exc:
                if port:
                    raise BadInput(
                        f"cannot serve {folder} on port {port} again, which the run's URLs name: "
                        f"{exc.message}; free the port and resume",
                        code="corpus-port-busy",
                        field="corpus",
                    ) from exc
                raise
            served.servers.append(server)
            served.entries.append({**corpus.record(), "url": server.url})
    except BaseException:
        served.stop()
        raise
    return served


@contextmanager
def serve_corpora(
    folders: Sequence[str | Path], *, ports: Sequence[int | None] = (), cache_root: Path | None = None
) -> Iterator[ServedCorpora]:
    served = start_corpora(folders, ports=ports, cache_root=cache_root)
    try:
        yield served
    finally:
        served.stop()
