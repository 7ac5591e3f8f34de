"""A local mini-web for the engine's end-to-end tests: pages about Python concurrency, served on loopback
by the project's own corpus server (static pages plus a SearXNG-compatible search endpoint)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from research_engine.corpus import CorpusServer

GIL_SENTENCE = (
    "CPython threads are limited by the global interpreter lock, so only one thread executes "
    "Python bytecode at a time."
)

PAGES: dict[str, tuple[str, list[str]]] = {
    "library/threading.html": (
        "threading: thread-based concurrency in Python",
        [
            GIL_SENTENCE,
            "Python threads remain appropriate for concurrent work that mostly waits on network or disk I/O.",
            "The threading module constructs higher-level threading interfaces on top of the lower level "
            "thread "
            "module, and its locks, events and conditions coordinate threads that share memory.",
        ],
    ),
    "library/multiprocessing.html": (
        "multiprocessing: process-based concurrency in Python",
        [
            "The multiprocessing package runs concurrent work in separate Python processes and so side-steps "
            "the "
            "global interpreter lock.",
            "Python processes do not share memory by default, so data moves between processes through pipes "
            "and "
            "queues that pickle the objects they carry.",
            "Starting processes costs more than starting threads, which matters when the concurrent tasks "
            "are small.",
        ],
    ),
    "library/asyncio.html": (
        "asyncio: asynchronous I/O and concurrency in Python",
        [
            "asyncio is a library to write concurrent code in Python using the async and await syntax.",
            "asyncio runs coroutines in a single thread, so CPU-bound work still blocks the event loop and "
            "the other "
            "tasks wait.",
            "asyncio suits programs with many concurrent network connections, where threads or processes "
            "would "
            "cost more memory.",
        ],
    ),
    "faq/library.html": (
        "Library and extension FAQ: threads, processes and the GIL",
        [
            GIL_SENTENCE,
            "The global interpreter lock exists because the memory management of CPython is not thread-safe.",
            "These limitations of threads for CPU-bound concurrent work in Python are the main reason to use "
            "processes instead.",
        ],
    ),
    "whatsnew/3.11.html": (
        "What changed in Python 3.11 for concurrency",
        [
            "Python 3.11 changed asyncio by adding task groups, which run concurrent tasks and wait for all "
            "of them.",
            "Python 3.11 made CPython faster, but threads and processes keep the same global interpreter "
            "lock rules.",
            "The official documentation of Python 3.11 states these changes in the what's new pages.",
        ],
    ),
}


def page_html(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><div role='main'><h1>{title}</h1>{body}</div></body></html>"
    )


def write_mini_web(root: Path) -> Path:
    for rel, (title, paragraphs) in PAGES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page_html(title, paragraphs), encoding="utf-8")
    return root


BRIEF = {
    "objective": "How does the global interpreter lock limit Python threads compared with processes?",
    "deliverable": "a cited memo",
    "depth": "standard",
    "claim_types": ["technical"],
    "recency": "any",
}


class CountingCorpusServer(CorpusServer):
    """The corpus server with every request counted by path (`seen`) and delayed by `delay` seconds, so a
    run over it lasts long enough for a test to act while it is under way."""

    def __init__(self, root: Path, delay: float = 0.0) -> None:
        super().__init__(root)
        seen: Counter[str] = Counter()
        lock = threading.Lock()
        self.seen = seen
        base = self.httpd.RequestHandlerClass

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                with lock:
                    seen[urlsplit(self.path).path] += 1
                time.sleep(delay)
                super().do_GET()

        self.httpd.RequestHandlerClass = Handler
