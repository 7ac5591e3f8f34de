"""A loopback chat-completions server that answers in the real shapes of llama.cpp's OpenAI-compatible server.

The shapes are those of llama-cpp-python 0.3.x (`python -m llama_cpp.server`): a completion with `usage` and
`finish_reason` ("stop", or "length" when `max_tokens` cut the reply); `/v1/models` listing the alias; the
context-length error as its `RouteErrorHandler` formats it (HTTP 400, OpenAI's `context_length_exceeded`);
a `response_format` of type `json_schema` refused as 0.3.36 refuses it (its request model accepts only `text`
and `json_object`, the latter with an optional `schema`; the validation error surfaces as an HTTP 500
`internal_server_error` whose message names the field: captured from a real server). Replies are scripted per
test; every request body is kept.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from werkzeug import Request, Response

Script = str | tuple[int, str] | tuple[int, str, dict[str, str]] | Callable[[dict[str, Any]], Any]


def completion(content: str, *, finish: str = "stop", prompt_tokens: int = 100, completion_tokens: int = 20):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "stub-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def context_length_error(window: int, prompt_tokens: int, max_tokens: int) -> tuple[int, str]:
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, {max_tokens} in the "
        "completion). Please reduce the length of the messages or completion."
    )
    body = {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    return 400, json.dumps(body)


JSON_SCHEMA_REFUSED = (
    500,
    json.dumps(
        {
            "error": {
                "message": (
                    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                    "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                    "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File "
                    '"llama_cpp/server/app.py", line 376, in create_chat_completion\n    POST '
                    "/v1/chat/completions | internal_server_error"
                ),
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        }
    ),
)


class LlamaStub:
    """Scripted replies in order; `window` (tokens, at four characters a token) refuses prompts that exceed it
    the way llama.cpp does; `accepts_json_schema=False` refuses `json_schema` as llama-cpp-python does."""

    def __init__(
        self, httpserver, *, window: int | None = None, accepts_json_schema: bool = True, models: Any = None
    ) -> None:
        self.replies: list[Script] = []
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.window = window
        self.accepts_json_schema = accepts_json_schema
        self.delay = 0.0
        self.default: Script | None = None
        self._lock = threading.Lock()
        self.models = models
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self.handle)
        httpserver.expect_request("/v1/models", method="GET").respond_with_handler(self.list_models)
        self.base_url = httpserver.url_for("/v1").replace("localhost", "127.0.0.1")

    def script(self, *replies: Script) -> None:
        """Replies in order: a completion's text, (status, body[, headers]), or a function of the request
        that returns either (or a ready completion dict)."""
        self.replies = list(replies)

    def list_models(self, request: Request) -> Response:
        body = (
            self.models
            if self.models is not None
            else {
                "object": "list",
                "data": [{"id": "stub-model", "object": "model", "owned_by": "me", "permissions": []}],
            }
        )
        return Response(json.dumps(body), content_type="application/json")

    def handle(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        with self._lock:
            self.requests.append(body)
            self.auth.append(request.headers.get("Authorization"))
            reply = self.replies.pop(0) if self.replies else self.default
        if reply is None:
            return Response("no scripted reply left", status=500)
        if self.delay:
            time.sleep(self.delay)
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema" and not self.accepts_json_schema:
            with self._lock:
                self.replies.insert(0, reply)  # the refused request did not use its reply
            status, text = JSON_SCHEMA_REFUSED
            return Response(text, status=status, content_type="application/json")
        if self.window is not None:
            used = sum(len(m["content"]) for m in body["messages"]) // 4
            if used + int(body.get("max_tokens") or 0) > self.window:
                status, text = context_length_error(self.window, used, int(body.get("max_tokens") or 0))
                return Response(text, status=status, content_type="application/json")
        if callable(reply):
            reply = reply(body)
        if isinstance(reply, dict):
            return Response(json.dumps(reply), content_type="application/json")
        if isinstance(reply, tuple):
            status, text, *headers = reply
            return Response(text, status=status, headers=headers[0] if headers else None)
        return Response(json.dumps(completion(reply)), content_type="application/json")

    def prompts(self) -> list[str]:
        return [r["messages"][-1]["content"] for r in self.requests]
