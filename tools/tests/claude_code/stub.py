"""A loopback stand-in for the Anthropic Messages API that answers the real Claude Code client with
scripted tool calls, and records everything the client sent.

The client streams (`stream: true`), so answers are server-sent events in the order the Messages API
emits them: `message_start`, per block `content_block_start` / `content_block_delta` /
`content_block_stop`, `message_delta` (the stop reason), `message_stop`. `count_tokens` and any other
start-up call get a harmless answer. Nothing here is specific to one test: a test gives a `Script`
(which conversation gets which turns) and reads back `Exchange`s.

A conversation is the main session or one subagent. The stub tells them apart by a `Role`: a
predicate over the request (its system prompt, its first user message); the turn to answer is the
number of assistant messages already in the request, so retries and parallel subagents stay
deterministic. A turn is a list of blocks (`tool(...)`, `text(...)`) or a function of the exchange
so far (to use an id a tool printed, say).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]
Turn = Sequence[Block] | Callable[["Exchange"], Sequence[Block]]


def tool(name: str, **input: Any) -> Block:
    """A tool_use block (the id is assigned when it is sent)."""
    return {"type": "tool_use", "name": name, "input": input}


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                out.append(_flatten(block.get("content")))
    return "\n".join(out)


@dataclass
class ToolCall:
    """One tool call the script made and what the client sent back for it."""

    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False

    def envelope(self) -> dict[str, Any]:
        """The `research-engine --json` envelope in a Bash result (the client merges stderr into it)."""
        for line in reversed((self.result or "").splitlines()):
            line = line.strip()
            if line.startswith("{") and line.endswith("}"):
                return json.loads(line)
        raise AssertionError(f"no JSON envelope in the {self.name} result: {self.result!r}")


@dataclass
class Exchange:
    """One request the client made to /v1/messages, parsed."""

    path: str
    body: dict[str, Any]
    role: str | None = None

    @property
    def tools(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools", [])]

    def tool_description(self, name: str) -> str:
        for t in self.body.get("tools", []):
            if t.get("name") == name:
                return str(t.get("description", ""))
        raise KeyError(name)

    @property
    def system(self) -> str:
        """The system prompt plus every system-role message (the client puts its skill and agent
        listings there)."""
        parts = [_flatten(self.body.get("system"))]
        parts += [_flatten(m.get("content")) for m in self.messages if m.get("role") == "system"]
        return "\n".join(parts)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def first_user(self) -> str:
        for m in self.messages:
            if m.get("role") == "user":
                return _flatten(m.get("content"))
        return ""

    @property
    def user_text(self) -> str:
        """Every user-role text block (prompts, expanded skills, system reminders), joined."""
        return "\n".join(_flatten(m.get("content")) for m in self.messages if m.get("role") == "user")

    @property
    def turn(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def calls(self) -> list[ToolCall]:
        """Every tool call in this conversation so far, with its result when the client sent one."""
        calls: dict[str, ToolCall] = {}
        for m in self.messages:
            if not isinstance(m.get("content"), list):
                continue
            for b in m["content"]:
                if b.get("type") == "tool_use":
                    calls[b["id"]] = ToolCall(b["id"], b["name"], dict(b.get("input") or {}))
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in calls:
                    call = calls[b["tool_use_id"]]
                    call.result = _flatten(b.get("content"))
                    call.is_error = bool(b.get("is_error"))
        return list(calls.values())

    def last_result(self) -> str:
        done = [c for c in self.calls() if c.result is not None]
        return done[-1].result or "" if done else ""


@dataclass
class Role:
    """A conversation the script answers: the first role whose `match` accepts a request owns it."""

    name: str
    match: Callable[[Exchange], bool]
    turns: list[Turn]
    final: str = "done"


@dataclass
class Script:
    roles: list[Role] = field(default_factory=list)

    def add(self, name: str, match: Callable[[Exchange], bool], turns: Iterable[Turn], final: str = "done"):
        self.roles.append(Role(name, match, list(turns), final))
        return self

    def answer(self, ex: Exchange) -> list[Block]:
        for role in self.roles:
            if role.match(ex):
                ex.role = role.name
                if ex.turn < len(role.turns):
                    turn = role.turns[ex.turn]
                    return list(turn(ex) if callable(turn) else turn)
                return [text(role.final)]
        return [text("ok")]


# Ids are unique across every stub of the process: a `claude -p --continue` session replays the earlier
# session's tool_use ids, and the client treats a repeated id as an interrupted call.
_IDS = itertools.count(1)

SUBAGENT_MARK = "cc_is_subagent=true"  # the client's billing header line in every subagent's system prompt


def main_session(marker: str) -> Callable[[Exchange], bool]:
    """Matches the main session whose first user message holds `marker` (the prompt given to `claude -p`)."""
    return lambda ex: SUBAGENT_MARK not in _flatten(ex.body.get("system")) and marker in ex.first_user


def subagent(marker: str) -> Callable[[Exchange], bool]:
    """Matches a subagent (an Agent call or a forked skill) by a marker in its task or its system prompt."""

    def match(ex: Exchange) -> bool:
        system = _flatten(ex.body.get("system"))
        return SUBAGENT_MARK in system and (marker in ex.first_user or marker in system)

    return match


class MessagesStub:
    """The HTTP server; use as a context manager. `base_url` goes into ANTHROPIC_BASE_URL."""

    def __init__(self, script: Script | None = None):
        self.script = script or Script()
        self.exchanges: list[Exchange] = []
        self.other: list[tuple[str, str]] = []  # (method, path) of every non-messages request
        self.errors: list[str] = []  # a script turn that raised: answered with text so the client ends
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> MessagesStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if exc[0] is None:
            assert not self.errors, f"a scripted turn failed: {self.errors}"

    # -------------------------------------------------------------------------------- reading back

    def by_role(self, role: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.role == role]

    def last(self, role: str) -> Exchange:
        found = self.by_role(role)
        roles = sorted({e.role for e in self.exchanges if e.role})
        assert found, f"the client never spoke as {role!r}; roles seen: {roles}"
        return found[-1]

    def calls(self, role: str) -> list[ToolCall]:
        """The tool calls of a role's conversation, with results (from its last request)."""
        return self.last(role).calls()

    # ----------------------------------------------------------------------------------- serving

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            n = next(_IDS)
        return f"{prefix}_01{n:022d}"

    def _respond(self, body: dict[str, Any], path: str) -> tuple[list[Block], str]:
        ex = Exchange(path=path, body=body)
        try:
            blocks = self.script.answer(ex)
        except Exception as exc:  # a test's turn function failed: end the conversation, keep the error
            with self._lock:
                self.errors.append(f"{ex.role}: {type(exc).__name__}: {exc}")
            blocks = [text(f"stub error: {exc}")]
        with self._lock:
            self.exchanges.append(ex)
        out = []
        for b in blocks:
            b = dict(b)
            if b["type"] == "tool_use":
                b["id"] = self._next_id("toolu")
            out.append(b)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in out) else "end_turn"
        return out, stop

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                stub.other.append(("GET", self.path))
                self._send(200, b"{}")

            def do_HEAD(self) -> None:
                stub.other.append(("HEAD", self.path))
                self._send(200, b"")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                path = self.path.split("?", 1)[0]
                if not re.fullmatch(r"/v1/messages", path):
                    stub.other.append(("POST", self.path))
                    if path.endswith("/count_tokens"):
                        self._send(200, b'{"input_tokens": 100}')
                    else:
                        self._send(200, b"{}")
                    return
                body = json.loads(raw or b"{}")
                blocks, stop = stub._respond(body, path)
                message = {
                    "id": stub._next_id("msg"),
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 1},
                }
                if not body.get("stream"):
                    message.update(content=blocks, stop_reason=stop)
                    self._send(200, json.dumps(message).encode())
                    return
                events: list[tuple[str, dict[str, Any]]] = [
                    ("message_start", {"type": "message_start", "message": message})
                ]
                for i, b in enumerate(blocks):
                    if b["type"] == "text":
                        start = {"type": "text", "text": ""}
                        delta = {"type": "text_delta", "text": b["text"]}
                    else:
                        start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
                        delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
                    events += [
                        (
                            "content_block_start",
                            {"type": "content_block_start", "index": i, "content_block": start},
                        ),
                        ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                        ("content_block_stop", {"type": "content_block_stop", "index": i}),
                    ]
                events += [
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 10},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                payload = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
                self._send(200, payload, "text/event-stream")

        return Handler
