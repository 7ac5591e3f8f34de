"""Record and replay: every HTTP exchange of a run, kept in a cassette so the run can be re-executed offline.

A cassette is a directory (by default `<run>/cassette/`, `run.path("cassette_dir")`):

    index.json          {"schema_version": 1, "volatile": [...], "hosts": {"host:port": [addresses]},
                         "exchanges": [{"key", "seq", "method", "url", "request_headers",
                                        "request_body_sha256", "status", "headers", "body_sha256",
                                        "body_bytes", "complete", "error", "error_after_body",
                                        "recorded_at"}, ...]}
    bodies/<sha256>     each response body, raw as it came off the wire (still content-encoded),
                        stored once under its sha256

Both sides hook into `net.HttpClient` at the transport level (`transport_hook`),
BELOW the SSRF guard, robots.txt, politeness, retries and caps, which therefore
run unchanged in both modes, and on top of the client's resolver (`resolver`):

    recorder = Recorder(run.path("cassette_dir"))
    client = HttpClient(allow_private=..., **client_kwargs(recorder))   # records
    replayer = Replayer(run.path("cassette_dir"))
    client = HttpClient(allow_private=..., **client_kwargs(replayer))   # replays; no socket, no DNS

`client_kwargs` also turns the HTTP cache off (a cache hit is not an exchange, so
a recorded run must not depend on one) and, for replay, politeness delays and
retry backoff (there is no host to be polite to). One Recorder may serve several
clients (the fetch client and the model's client); it is thread-safe.

Matching: the key is method + URL (secrets stripped) + the sha256 of the request
body (JSON bodies canonicalized, secret fields dropped). Identical requests get a
per-key sequence number, served back in the same order, so replay is order-
insensitive across different requests (concurrent fetches may interleave
differently) yet deterministic. A request the cassette does not hold fails as a
network error (`httpx.ConnectError`) and is listed in `Replayer.misses`; a key
asked for more often than recorded gets its last exchange again, listed in
`Replayer.overruns`.

Secrets never reach the cassette (`research_engine.redaction`, the one rule): query
parameters named like credentials are dropped from URLs, headers named like
credentials are REDACTED, and every known secret value (`Settings.secrets`) is
scrubbed wherever it appears, response bodies included (an upstream that echoes a key back:
a compressed body holding one is kept decoded, `scrubbed: true` in its index entry). Request
bodies are stored only as digests, computed
without their credential fields (model prompts are not kept here; see the model's
verbose mode).

Volatile fields (`VOLATILE`): what replay does not reproduce byte for byte.
`recorded_at` in this index; in the trace, every timestamp a tool stamps when it
runs (run.json created_at/updated_at and event times, retrieved_at of sources and
evidence, added_at/recorded_at of sub-questions, claims, challenges, gaps and loop
cycles) and elapsed times; a run's wall-clock budget spent. Response headers,
including Date, are replayed verbatim, so anything derived from them reproduces.

This module never opens a connection of its own and never reads a response body
beyond what the client reads: the body is teed as the client streams it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from research_engine import bounded
from research_engine.bounded import CAPS
from research_engine.errors import BadInput
from research_engine.net.content import DecodeError, Decoder, TooLarge
from research_engine.net.guard import default_resolver
from research_engine.redaction import drop_secret_fields, redact_headers, redact_text, redact_url, scrub_bytes
from research_engine.trace import atomic_write_bytes, atomic_write_text, iso

log = logging.getLogger("research_engine.engine.cassette")

SCHEMA_VERSION = 1
INDEX = "index.json"
BODIES = "bodies"
REDACTED = "REDACTED"
DIGEST_RE = re.compile(r"[0-9a-f]{64}")
VOLATILE = (
    "cassette: exchanges[].recorded_at",
    "run.json: created_at, updated_at, events[].at, budgets.spent.wall_clock_seconds",
    "retrieve/*.md and verify/evidence/*.md: retrieved_at",
    "sub-questions, claims, tensions, challenges, gaps, loop-log cycles: added_at / recorded_at / at",
    "any elapsed_ms or duration figure",
)


def body_digest(body: bytes) -> str | None:
    """sha256 of a request body; a JSON object is canonicalized and loses its credential fields first."""
    if not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return hashlib.sha256(body).hexdigest()
    data = drop_secret_fields(data)
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def exchange_key(method: str, url: str, body: bytes, secrets: Sequence[str] = ()) -> str:
    return f"{method.upper()} {redact_url(url, secrets)} {body_digest(body) or '-'}"


def _request_body(request: Any) -> bytes:
    try:
        return bytes(request.content)
    except Exception:  # a streaming request body (never sent by HttpClient): read it once
        return bytes(request.read())


class Recorder:
    """Records every exchange of the clients it is hooked into (see the module docstring).

    Opening an existing cassette continues it (a resumed run appends; sequence
    numbers continue), so nothing recorded before is lost.
    """

    mode = "record"

    def __init__(self, directory: str | os.PathLike[str], secrets: Sequence[str] = ()) -> None:
        self.directory = Path(directory)
        (self.directory / BODIES).mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._secrets = tuple(secrets)
        index = _read_index(self.directory) if (self.directory / INDEX).is_file() else _empty_index()
        self.exchanges: list[dict[str, Any]] = list(index["exchanges"])
        self.hosts: dict[str, list[str]] = dict(index["hosts"])
        self._next_seq: dict[str, int] = defaultdict(int)
        for entry in self.exchanges:
            self._next_seq[entry["key"]] = max(self._next_seq[entry["key"]], entry["seq"] + 1)
        self._slots: list[dict[str, Any] | None] = []  # reserved in request order, filled when complete
        self._inners: list[Any] = []

    # -- hooks for HttpClient

    def __call__(self, inner: Any) -> Any:
        """`transport_hook`: wrap the client's real transport so every exchange is recorded."""
        self._inners.append(inner)
        return _recording_transport(self, inner)

    def resolver(
        self, inner: Callable[[str, int], list[str]] | None = None
    ) -> Callable[[str, int], list[str]]:
        """A resolver for HttpClient that records each answer (replay gives the same answers back)."""

        resolve = inner or default_resolver

        def recording(host: str, port: int) -> list[str]:
            addresses = list(resolve(host, port))
            with self._lock:
                if self.hosts.get(f"{host}:{port}") != addresses:
                    self.hosts[f"{host}:{port}"] = addresses
                    self._write_index()
            return addresses

        return recording

    # -- recording

    def _reserve(self, request: Any) -> tuple[dict[str, Any], int]:
        body = _request_body(request)
        key = exchange_key(request.method, str(request.url), body, self._secrets)
        entry = {
            "key": key,
            "seq": 0,
            "method": request.method.upper(),
            "url": redact_url(str(request.url), self._secrets),
            "request_headers": redact_headers(request.headers.multi_items(), self._secrets),
            "request_body_sha256": body_digest(body),
            "status": None,
            "headers": {},
            "body_sha256": None,
            "body_bytes": 0,
            "complete": False,
            "error": None,
            "error_after_body": None,
            "recorded_at": iso(),
        }
        with self._lock:
            entry["seq"] = self._next_seq[key]
            self._next_seq[key] += 1
            self._slots.append(None)
            slot = len(self._slots) - 1
        return entry, slot

    def _scrubbed(self, entry: dict[str, Any], body: bytes) -> bytes:
        """The body as the cassette keeps it: every known secret value scrubbed. A compressed body that
        held one is kept decoded (its recorded content-encoding and length dropped, the new length noted),
        since the secret cannot be scrubbed from compressed bytes; any other body stays as served."""
        if not body or not self._secrets:
            return body
        headers = entry.get("headers") or {}
        encoding = str(headers.get("content-encoding") or "identity").strip().lower()
        if encoding in ("", "identity"):
            cleaned = scrub_bytes(body, self._secrets)
        else:
            try:
                decoder = Decoder(encoding, CAPS["snapshot"])
                decoded = decoder.feed(body) + (decoder.flush() if entry.get("complete") else b"")
            except (DecodeError, TooLarge):
                return body  # nothing readable in it to scrub
            cleaned = scrub_bytes(decoded, self._secrets)
            if cleaned == decoded:
                return body
            headers = {k: v for k, v in headers.items() if k != "content-encoding"}
        if cleaned == body:
            return body
        if "content-length" in headers:
            headers = {**headers, "content-length": str(len(cleaned))}
        entry["headers"] = headers
        entry["scrubbed"] = True
        return cleaned

    def _finish(self, entry: dict[str, Any], slot: int, body: bytes | None) -> None:
        if body is not None:
            body = self._scrubbed(entry, body)
            digest = hashlib.sha256(body).hexdigest()
            path = self.directory / BODIES / digest
            if not path.exists() or not bounded.holds_digest(path, digest):
                atomic_write_bytes(path, body)
            entry["body_sha256"], entry["body_bytes"] = digest, len(body)
        with self._lock:
            self._slots[slot] = entry
            self._write_index()

    def _write_index(self) -> None:
        done = [e for e in self._slots if e is not None]
        index = {
            "schema_version": SCHEMA_VERSION,
            "volatile": list(VOLATILE),
            "hosts": dict(sorted(self.hosts.items())),
            "exchanges": self.exchanges + done,
        }
        atomic_write_text(self.directory / INDEX, json.dumps(index, indent=1, ensure_ascii=False) + "\n")

    @property
    def recorded(self) -> list[dict[str, Any]]:
        with self._lock:
            return self.exchanges + [e for e in self._slots if e is not None]


def _recording_transport(recorder: Recorder, inner: Any) -> Any:
    class TeeStream(httpx.SyncByteStream):
        """Passes the body through as the client reads it, and records what was read when closed."""

        def __init__(self, stream: Any, entry: dict[str, Any], slot: int) -> None:
            self._stream, self._entry, self._slot = stream, entry, slot
            self._chunks: list[bytes] = []
            self._done = False

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._stream:
                    self._chunks.append(chunk)
                    yield chunk
            except httpx.TransportError as exc:
                self._entry["error_after_body"] = type(exc).__name__
                raise
            self._entry["complete"] = True

        def close(self) -> None:
            try:
                self._stream.close()
            finally:
                if not self._done:
                    self._done = True
                    recorder._finish(self._entry, self._slot, b"".join(self._chunks))

    class RecordingTransport(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            entry, slot = recorder._reserve(request)
            try:
                response = inner.handle_request(request)
            except httpx.TransportError as exc:
                entry["error"] = type(exc).__name__
                entry["error_detail"] = redact_text(str(exc), recorder._secrets)
                recorder._finish(entry, slot, None)
                raise
            entry["status"] = response.status_code
            entry["headers"] = redact_headers(response.headers.multi_items(), recorder._secrets)
            return httpx.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=TeeStream(response.stream, entry, slot),
                extensions=response.extensions,
            )

        def close(self) -> None:
            inner.close()

    return RecordingTransport()


# ---------------------------------------------------------------------------- replay


class Replayer:
    """Serves a cassette back to HttpClient; opens no socket and resolves no name."""

    mode = "replay"

    def __init__(self, directory: str | os.PathLike[str], secrets: Sequence[str] = ()) -> None:
        self.directory = Path(directory)
        if not (self.directory / INDEX).is_file():
            raise BadInput(
                f"no cassette at {self.directory} (expected {INDEX})",
                code="unknown-cassette",
                field="cassette",
            )
        index = _read_index(self.directory)
        _check_bodies(self.directory, index["exchanges"])
        self.hosts: dict[str, list[str]] = dict(index["hosts"])
        self._by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for entry in index["exchanges"]:
            self._by_key[entry["key"]].append(entry)
        for entries in self._by_key.values():
            entries.sort(key=lambda e: e["seq"])
        self._served: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._secrets = tuple(secrets)
        self.misses: list[str] = []
        self.overruns: list[str] = []
        self.served = 0

    def __call__(self, inner: Any) -> Any:
        """`transport_hook`: replace the client's real transport; the real one is closed unused."""
        inner.close()
        return _replay_transport(self)

    def resolver(self, inner: Any = None) -> Callable[[str, int], list[str]]:
        """The recorded DNS answers; a name the cassette never saw is unresolved (no lookup is made)."""

        def replayed(host: str, port: int) -> list[str]:
            addresses = self.hosts.get(f"{host}:{port}")
            if addresses is None:
                raise OSError(
                    f"{host}:{port} was never resolved in this cassette (replay makes no DNS lookup)"
                )
            return list(addresses)

        return replayed

    def _next(self, request: Any) -> dict[str, Any] | None:
        key = exchange_key(request.method, str(request.url), _request_body(request), self._secrets)
        with self._lock:
            entries = self._by_key.get(key)
            if not entries:
                self.misses.append(key)
                return None
            at = self._served[key]
            self._served[key] += 1
            self.served += 1
            if at >= len(entries):
                self.overruns.append(key)
                return entries[-1]
            return entries[at]

    def body(self, digest: str | None) -> bytes:
        """The recorded body, checked against its name again as it is served (no second read)."""
        if digest is None:
            return b""
        path = self.directory / BODIES / digest
        if not path.is_file():
            raise BadInput(f"cassette body {digest} is missing from {self.directory}", code="broken-cassette")
        body = bounded.read_bytes(path, "snapshot")
        actual = hashlib.sha256(body).hexdigest()
        if actual != digest:
            raise bounded.content_mismatch(path, actual, "cassette body")
        return body

    def unused(self) -> list[str]:
        """Keys recorded but never asked for (a replayed run that diverged asks for fewer)."""
        with self._lock:
            return sorted(k for k, entries in self._by_key.items() if self._served.get(k, 0) < len(entries))


def _transport_error(name: str | None, message: str, request: Any) -> Exception:
    cls = getattr(httpx, name or "", None)
    if not (isinstance(cls, type) and issubclass(cls, httpx.TransportError)):
        cls = httpx.TransportError
    return cls(message, request=request)


def _replay_transport(replayer: Replayer) -> Any:
    class ReplayStream(httpx.SyncByteStream):
        def __init__(self, body: bytes, error: str | None, request: Any) -> None:
            self._body, self._error, self._request = body, error, request

        def __iter__(self) -> Iterator[bytes]:
            for start in range(0, len(self._body), 65536):
                yield self._body[start : start + 65536]
            if self._error:
                raise _transport_error(
                    self._error, "replayed: the recorded body broke off here", self._request
                )

    class ReplayTransport(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            entry = replayer._next(request)
            if entry is None:
                raise httpx.ConnectError(
                    f"replay: the cassette holds no exchange for {request.method} "
                    f"{redact_url(str(request.url), replayer._secrets)}",
                    request=request,
                )
            if entry.get("error"):
                raise _transport_error(
                    entry["error"], f"replayed: {entry.get('error_detail') or entry['error']}", request
                )
            return httpx.Response(
                status_code=entry["status"],
                headers=list(entry["headers"].items()),
                stream=ReplayStream(
                    replayer.body(entry.get("body_sha256")), entry.get("error_after_body"), request
                ),
            )

    return ReplayTransport()


# ---------------------------------------------------------------------------- shared


def _empty_index() -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "volatile": list(VOLATILE), "hosts": {}, "exchanges": []}


def _read_index(directory: Path) -> dict[str, Any]:
    path = directory / INDEX
    try:
        index = bounded.load_json(bounded.read_bytes(path), str(path))
    except BadInput as exc:
        raise BadInput(
            f"{path} is not a readable cassette index: {exc.message}", code="broken-cassette"
        ) from exc
    if not isinstance(index, dict) or not isinstance(index.get("exchanges"), list):
        raise BadInput(f"{path} is not a cassette index", code="broken-cassette")
    index.setdefault("hosts", {})
    return index


def check_cassette(directory: str | os.PathLike[str]) -> None:
    """Refuse a cassette whose index is unreadable or names a body that is missing or altered (BadInput).
    `run --replay` calls it before the run directory exists; `Replayer` calls it again, which costs a
    `stat` per body already checked by this process."""
    directory = Path(directory)
    _check_bodies(directory, _read_index(directory)["exchanges"])


# Bodies this process has hashed, with the (size, mtime) they had: not hashed again while unchanged.
_VERIFIED: dict[Path, tuple[int, int]] = {}


def _check_bodies(directory: Path, exchanges: list[Any]) -> None:
    """Every body the index names exists and still has the digest it is named for (streamed, one pass), so
    a replay refuses an altered cassette before any stage reads from it."""
    checked: set[str] = set()
    for entry in exchanges:
        digest = entry.get("body_sha256") if isinstance(entry, dict) else None
        if digest is None or digest in checked:
            continue
        if not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest):
            raise BadInput(
                f"{directory / INDEX} names a body {digest!r} that is no sha256", code="broken-cassette"
            )
        path = directory / BODIES / digest
        if not path.is_file():
            raise BadInput(f"cassette body {path} is missing (the index names it)", code="broken-cassette")
        stat = path.stat()
        if _VERIFIED.get(path.resolve()) != (stat.st_size, stat.st_mtime_ns):
            actual = bounded.sha256_file(path, "snapshot")
            if actual != digest:
                raise bounded.content_mismatch(path, actual, "cassette body")
            _VERIFIED[path.resolve()] = (stat.st_size, stat.st_mtime_ns)
        checked.add(digest)


def client_kwargs(
    cassette: Recorder | Replayer, resolver: Callable[[str, int], list[str]] | None = None
) -> dict[str, Any]:
    """Keyword arguments for `net.HttpClient` that plug `cassette` in (see the module docstring)."""
    kwargs: dict[str, Any] = {
        "transport_hook": cassette,
        "resolver": cassette.resolver(resolver),
        "use_cache": False,
    }
    if isinstance(cassette, Replayer):
        kwargs.update(per_host_interval=0.0, backoff_base=0.0, host_intervals={})
    return kwargs


def open_cassette(
    mode: str, directory: str | os.PathLike[str], secrets: Sequence[str] = ()
) -> Recorder | Replayer:
    """`Recorder` for mode "record", `Replayer` for "replay" (`secrets`: `Settings.secrets`, scrubbed)."""
    if mode == "record":
        return Recorder(directory, secrets)
    if mode == "replay":
        return Replayer(directory, secrets)
    raise BadInput(f"unknown cassette mode {mode!r}; expected record or replay", code="bad-cassette-mode")
