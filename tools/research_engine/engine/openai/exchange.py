"""One OpenAI-compatible chat endpoint: the exchange, the context window, structured output, errors.

Nothing here knows what a stage asks (`openai.model` writes the prompts). Per call:

- Its own HTTP client and timeout (`Settings.model_timeout`, default 600 s per call): a model on a CPU
  needs minutes where a page fetch needs seconds, so the engine's page client is never used for it.
- No blind resend. A timeout is not retried: a single-slot server (llama.cpp) is still working on the
  first request, and a resend would queue behind it. A 429 (after its Retry-After, at most a minute), a
  503 and a refused connection are retried once; the server got nothing or said to come back.
- The context window: `Settings.model_context`, else what the server reports at `/v1/models`
  (`max_model_len`, `context_length`, `max_context_length`, `n_ctx`), else 4,096 tokens. `room` is what a
  prompt may use once the stage's answer room (`max_tokens`) is set aside; prompts are measured at three
  characters a token, which errs short for English and code alike. A context-length error teaches the
  window the server named.
- Structured output, a ladder stepped down only when the server's error names the parameter:
  `json_schema` (strict; vLLM, llama.cpp's own server, hosted APIs), `json_object` with the schema
  (llama-cpp-python turns it into a grammar), `json_object`, and last the prompt alone.
- Errors classified (`vocabulary.ModelFailure`) from the status and the server's own message, and raised
  as `ModelCallFailed` with the kind, so each stage reacts to what happened.
- Every exchange is counted per stage in `usage` (tokens from the server's `usage`, estimated when absent;
  seconds). With `record_dir` (`run -v`), each one is kept as `model/NNNN-<stage>.json`: the request
  messages and parameters, the reply, usage, timing and any error, with known secrets scrubbed. The API
  key travels only in the Authorization header, which is never written.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from research_engine.engine.models import Usage
from research_engine.errors import NotConfigured, UpstreamFailed
from research_engine.net import FetchResult, HttpClient, RetryPolicy
from research_engine.redaction import redact_text
from research_engine.settings import Settings
from research_engine.trace import atomic_write_text, iso
from research_engine.vocabulary import FetchError, ModelFailure

log = logging.getLogger("research_engine.engine.model")

TIMEOUT_DEFAULT = 600.0
CONTEXT_DEFAULT = 4096
CHARS_PER_TOKEN = 3.0
MESSAGE_OVERHEAD = 8  # the chat template's tokens around each message
CONTEXT_MARGIN = 64  # tokens kept free beyond the estimate
# Once, after 1 s or the server's Retry-After up to a minute.
MODEL_RETRY = RetryPolicy(attempts=1, backoff_base=1.0, jitter=0.0, retry_after_cap=60.0)
OUTPUT_MODES = ("json_schema", "json_object+schema", "json_object", "prompt")
# Keys under which servers report the context window at /v1/models (vLLM, LM Studio, llama.cpp, others).
CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "n_ctx", "context_window")

_CONTEXT_RE = re.compile(
    r"maximum context length|context[ _](?:length|window|size)|exceeds? (?:the )?(?:available )?context"
    r"|n_ctx|prompt is too long|too many tokens",
    re.I,
)
_CONTEXT_SIZE_RE = re.compile(
    r"(?:maximum context length is|context window of|context size (?:is|of)|n_ctx\s*[=:]?)\s*(\d{3,7})", re.I
)
_PARAMETER_RE = re.compile(r"response_format|json_schema|\bschema\b|grammar", re.I)
_FORMAT_RE = re.compile(r"response_format|json_schema")


def configured_endpoint(
    settings: Settings, base_url: str | None = None, model: str | None = None
) -> tuple[str, str]:
    """The endpoint's base URL and model name, from the arguments or the settings; NotConfigured if absent.

    The engine calls this before it locks a brief, so a missing setting never leaves an empty run behind.
    """
    base_url = base_url or settings.model_base_url
    model = model or settings.model
    if not base_url:
        raise NotConfigured(
            "the openai model needs RESEARCH_ENGINE_MODEL_BASE_URL (e.g. http://127.0.0.1:8080/v1)",
            code="model-not-configured",
            field="model",
        )
    if not model:
        raise NotConfigured(
            "the openai model needs RESEARCH_ENGINE_MODEL (the model name the server serves)",
            code="model-not-configured",
            field="model",
        )
    return base_url, model


class ModelCallFailed(UpstreamFailed):
    """A model call with no usable answer: `kind` is a `ModelFailure`, `context` a window the server named."""

    def __init__(self, kind: str, message: str, *, context: int | None = None) -> None:
        super().__init__(message, code=f"model-{kind}")
        self.kind = kind
        self.context = context


@dataclass
class Reply:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    return sum(estimate_tokens(m["content"]) + MESSAGE_OVERHEAD for m in messages)


def is_private_endpoint(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    if host in ("localhost", "ip6-localhost") or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback


def error_message(result: FetchResult) -> str:
    """The server's own words about a failed call: `error.message`, `detail`, or the body's start."""
    text = result.body[:8192].decode("utf-8", "replace") if result.body else ""
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:1000] or str(result.error_detail or result.error)
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            parts = [str(error.get(k)) for k in ("message", "code", "param", "type") if error.get(k)]
            return " | ".join(parts)[:1000]
        if error or data.get("detail") or data.get("message"):
            return json.dumps(error or data.get("detail") or data.get("message"))[:1000]
    return text[:1000]


def classify(result: FetchResult) -> tuple[str, str, int | None]:
    """(ModelFailure kind, the server's message, a context window it named) for a failed call."""
    if result.error == FetchError.TIMEOUT:
        return ModelFailure.TIMEOUT, str(result.error_detail or "timed out"), None
    if result.status is None:
        return ModelFailure.NETWORK, str(result.error_detail or result.error), None
    message = error_message(result)
    if _CONTEXT_RE.search(message) and result.status in (400, 413, 422, 500):
        size = _CONTEXT_SIZE_RE.search(message)
        return ModelFailure.CONTEXT_LENGTH, message, int(size.group(1)) if size else None
    if result.status == 429:
        return ModelFailure.RATE_LIMITED, message, None
    if result.status == 500 and _FORMAT_RE.search(message):
        # llama-cpp-python 0.3.x answers a response_format type it does not know with a 500 naming the field.
        return ModelFailure.UNSUPPORTED_PARAMETER, message, None
    if result.status >= 500:
        return ModelFailure.SERVER_ERROR, message, None
    if result.status in (400, 422) and _PARAMETER_RE.search(message):
        return ModelFailure.UNSUPPORTED_PARAMETER, message, None
    return ModelFailure.BAD_REQUEST, message, None


def _response_format(mode: str, stage: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if mode == "prompt":
        return None
    if mode == "json_schema" and schema is not None:
        return {"type": "json_schema", "json_schema": {"name": stage, "schema": schema, "strict": True}}
    if mode == "json_object+schema" and schema is not None:
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


class Endpoint:
    """The chat-completions endpoint of one model, with its limits learnt as the run goes."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        usage: Usage,
        api_key: str | None = None,
        client: Any = None,
        timeout: float | None = None,
        context_tokens: int | None = None,
        retry: RetryPolicy = MODEL_RETRY,
        temperature: float = 0.1,
        secrets: tuple[str, ...] = (),
        record_dir: str | Path | None = None,
        client_options: dict[str, Any] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.usage = usage
        self.retry = retry
        self.temperature = temperature
        self.timeout = timeout or TIMEOUT_DEFAULT
        self.secrets = tuple(secrets)
        self.record_dir = Path(record_dir) if record_dir else None
        self.output_mode = OUTPUT_MODES[0]
        self._api_key = api_key or None
        self._context = context_tokens
        self._context_source = "setting" if context_tokens else None
        self._lock = threading.Lock()
        self._sequence = 0
        self._owns_client = client is None
        if client is None:
            # The endpoint is the user's own configuration: a private address is allowed for this client
            # only. One deadline per call (no drip cut-off shorter than the call), no retries of its own.
            options: dict[str, Any] = {
                "allow_private": is_private_endpoint(self.base_url),
                "use_cache": False,
                "timeout": self.timeout,
                "deadline": self.timeout,
                "retry": retry.replace(attempts=0),
                "per_host_interval": 0.0,
                "max_bytes": 16 * 2**20,
                **(client_options or {}),
            }
            client = HttpClient(**options)
        self.client = client

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    # ------------------------------------------------------------------ the context window

    @property
    def context_window(self) -> int:
        if self._context is None:
            self._context, self._context_source = self._reported_context()
        return self._context

    @property
    def known_context(self) -> tuple[int | None, str | None]:
        """The window and where it came from (setting, server, server-error, default), without asking."""
        return self._context, self._context_source

    def _reported_context(self) -> tuple[int, str]:
        result = self.client.get(
            f"{self.base_url}/models", headers=self._headers(), accept=("json",), check_robots=False
        )
        if result.ok:
            try:
                data = result.json()
            except Exception:  # noqa: BLE001 - any unreadable answer means "not reported"
                data = None
            for entry in (data or {}).get("data") or [] if isinstance(data, dict) else []:
                if not isinstance(entry, dict) or entry.get("id") not in (self.model, None):
                    continue
                for holder in (entry, entry.get("meta") or {}):
                    for key in CONTEXT_KEYS:
                        value = holder.get(key) if isinstance(holder, dict) else None
                        if isinstance(value, int) and value >= 256:
                            return value, "server"
        return CONTEXT_DEFAULT, "default"

    def room(self, max_tokens: int) -> int:
        """Prompt tokens (estimated) a call may use once `max_tokens` of answer room is set aside."""
        return max(256, self.context_window - max_tokens - CONTEXT_MARGIN)

    def answer_room(self, wanted: int) -> int:
        """`wanted` answer tokens, never more than half the window (the prompt needs the rest)."""
        return max(64, min(wanted, self.context_window // 2))

    # ------------------------------------------------------------------ one call

    def _headers(self) -> dict[str, str] | None:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else None

    def complete(
        self, stage: str, messages: list[dict[str, str]], *, schema: dict[str, Any] | None, max_tokens: int
    ) -> Reply:
        """One chat completion; ModelCallFailed when none came. Steps down the output ladder on its own."""
        while True:
            payload: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
                "max_tokens": max_tokens,
            }
            response_format = _response_format(self.output_mode, stage, schema)
            if response_format is not None:
                payload["response_format"] = response_format
            try:
                return self._send(stage, payload)
            except ModelCallFailed as failed:
                step_down = failed.kind == ModelFailure.UNSUPPORTED_PARAMETER and response_format is not None
                if not step_down:
                    raise
                index = OUTPUT_MODES.index(self.output_mode)
                self.output_mode = OUTPUT_MODES[min(index + 1, len(OUTPUT_MODES) - 1)]
                log.info(
                    "the model server refused %s (%s); using %s",
                    (response_format or {}).get("type"),
                    failed.message[:200],
                    self.output_mode,
                )

    def _send(self, stage: str, payload: dict[str, Any]) -> Reply:
        started = time.monotonic()
        attempt = 0
        while True:
            result = self.client.post_json(
                f"{self.base_url}/chat/completions", payload, headers=self._headers()
            )
            if result.ok:
                break
            kind, message, context = classify(result)
            self.usage.count(stage, kind, failure=True)
            self._record(stage, payload, None, time.monotonic() - started, error=f"{kind}: {message}")
            if context:
                self._context, self._context_source = min(context, self.context_window), "server-error"
            retriable = kind in (ModelFailure.RATE_LIMITED, ModelFailure.NETWORK) or result.status == 503
            wait = self.retry.delay(attempt, result.retry_after) if retriable else None
            if wait is None:
                raise ModelCallFailed(
                    kind,
                    f"model endpoint {self.base_url} failed for {stage}: {kind}: {message}",
                    context=context,
                )
            log.info("model call for %s failed (%s); retrying in %.1fs", stage, kind, wait)
            self.retry.sleep(wait)
            attempt += 1
        seconds = time.monotonic() - started
        try:
            data = result.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            finish = choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            self.usage.count(stage, ModelFailure.BAD_REPLY, failure=True)
            raise ModelCallFailed(
                ModelFailure.BAD_REPLY,
                f"model endpoint {self.base_url} returned no chat completion for {stage}",
            ) from exc
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            spent = (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
        else:  # servers that report no usage: an estimate still feeds the budget
            spent = (prompt_tokens(payload["messages"]), estimate_tokens(text))
        self.usage.add(*spent, stage=stage, seconds=seconds)
        reply = Reply(str(text), finish if isinstance(finish, str) else None, spent[0], spent[1], seconds)
        self._record(stage, payload, reply, seconds)
        return reply

    def _record(
        self,
        stage: str,
        payload: dict[str, Any],
        reply: Reply | None,
        seconds: float,
        *,
        error: str | None = None,
    ) -> None:
        if self.record_dir is None:
            return
        with self._lock:
            if self._sequence == 0:  # a resumed run goes on after the exchanges already kept
                self._sequence = (
                    len(list(self.record_dir.glob("[0-9]*.json"))) if self.record_dir.is_dir() else 0
                )
            self._sequence += 1
            path = self.record_dir / f"{self._sequence:04d}-{stage}.json"
        record = {
            "at": iso(),
            "stage": stage,
            "request": {k: v for k, v in payload.items()},
            "output_mode": self.output_mode,
            "context_window": self.context_window,
            "seconds": round(seconds, 3),
            "reply": reply.text if reply else None,
            "finish_reason": reply.finish_reason if reply else None,
            "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
            if reply
            else None,
            "error": error,
        }
        text = redact_text(json.dumps(record, indent=1, ensure_ascii=False), self.secrets)
        atomic_write_text(path, text + "\n")
