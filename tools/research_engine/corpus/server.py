"""The corpus over HTTP: static documents plus a SearXNG-compatible search endpoint, on loopback.

- the documents themselves, served read-only as static files (`GET /<path>`) with their media type,
  a permissive `/robots.txt`, content-derived ETags and no directory listings;
- `GET /search?q=...&format=json[&pageno=N]`, answered in SearXNG's shape (`query`, `results[{url,
  title, content, engine, engines, positions, score, category, ...}]`, `answers`, `corrections`,
  `infoboxes`, `suggestions`, `unresponsive_engines`, `number_of_results`), so
  `SEARXNG_URL=http://127.0.0.1:PORT` (or `run --corpus DIR`) makes it the engine's search backend.

It never fetches anything, never writes into the directory and binds to loopback unless told otherwise.
The stdlib `ThreadingHTTPServer` is enough for loopback traffic from one run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from research_engine.corpus.collection import Corpus
from research_engine.corpus.files import media_type, read_document
from research_engine.errors import BadInput


def _host_port(address: object) -> tuple[str, int]:
    """A TCP server's address as (host, port); typeshed types `server_address` for every socket family."""
    if not isinstance(address, tuple):
        raise TypeError(f"not a TCP server address: {address!r}")
    return str(address[0]), int(address[1])


def _handler_for(corpus: Corpus) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "research-engine-corpus"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature

            logging.getLogger("research_engine.corpus").debug(format, *args)

        def _send(
            self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            self._send(status, body, "application/json")

        def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
            self.do_GET()

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            parts = urlsplit(self.path)
            if parts.path == "/robots.txt":
                self._send(200, b"User-agent: *\nAllow: /\n", "text/plain; charset=utf-8")
                return
            if parts.path == "/search":
                self._search(parse_qs(parts.query))
                return
            target = corpus.file_for(parts.path)
            if target is None:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            try:
                body = read_document(target)
            except BadInput:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if self.headers.get("If-None-Match") == etag:
                self._send(304, b"", "text/plain", {"ETag": etag})
                return
            ctype = media_type(target) or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if ctype.startswith("text/") and "charset" not in ctype:
                ctype += "; charset=utf-8"
            self._send(200, body, ctype, {"ETag": etag})

        def _search(self, params: dict[str, list[str]]) -> None:
            query = (params.get("q") or [""])[0].strip()
            if (params.get("format") or ["html"])[0] != "json":
                self._send(403, b"<html><body>JSON format only</body></html>", "text/html; charset=utf-8")
                return
            if not query:
                self._json(400, {"error": "missing query: q"})
                return
            try:
                pageno = int((params.get("pageno") or ["1"])[0])
                if pageno < 1:
                    raise ValueError
            except ValueError:
                self._json(400, {"error": "invalid pageno"})
                return
            host = self.headers.get("Host") or "{}:{}".format(*_host_port(self.server.server_address))
            self._json(200, corpus.search(query, f"http://{host}", pageno))

    return Handler


class CorpusServer:
    """The corpus on a background thread: `with CorpusServer(dir) as server: server.url`."""

    def __init__(
        self, root: str | Path, host: str = "127.0.0.1", port: int = 0, corpus: Corpus | None = None
    ) -> None:
        self.corpus = corpus or Corpus(root)
        try:
            self.httpd = ThreadingHTTPServer((host, port), _handler_for(self.corpus))
        except OSError as exc:
            raise BadInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}", code="bad-port") from exc
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = _host_port(self.httpd.server_address)
        return f"http://{host}:{port}"

    def start(self) -> CorpusServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="corpus-server", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> CorpusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
