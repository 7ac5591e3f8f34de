"""What a model's reply must be before a stage uses it: JSON of the stage's shape, complete, and not an echo.

Small models echo the prompt's template: `{"queries": ["...", "..."]}`, the literal "reject" as a
selection reason, `"<untrusted-source id>"` as a source, "..." as a quote. Each stage's schema (sent to the
server as structured output where it takes one, and always checked here) fixes the shape; `placeholder`
then refuses the free-text values that carry nothing: empty, punctuation, an `<angle-bracket>` token, a
word of the stage's own vocabulary standing where prose belongs, a string of the template's example, or
a line of the instructions repeated back.

`read_reply` turns one reply into (value, None) or (None, rejection kind, detail); the kinds are
`vocabulary.ModelRejection`. This module does no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from research_engine.libraries import jsonschema
from research_engine.vocabulary import Angle, ClaimType, Confidence, ModelRejection, Verdict

_THINK_RE = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_EXAMPLE_STRING_RE = re.compile(r'"([^"]{1,80})"')
_BRACKET_TOKEN_RE = re.compile(r"^<[^<>]{1,80}>$")
_NO_CONTENT_RE = re.compile(r"^[\W_]*$")
# Words that are a stage's vocabulary, never its prose: a reason or a text that is only one of them.
VOCABULARY_WORDS = frozenset(
    {"choose", "reject", "unsure", "null", "none", "true", "false", "string", "text", "reason", "quote"}
    | {str(v) for v in (*Verdict, *Confidence, *ClaimType, *Angle)}
)


def _string(min_length: int = 1) -> dict[str, Any]:
    return {"type": "string", "minLength": min_length}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    # Every property required and no other: what strict json_schema servers accept.
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def decompose_schema(claim_types: list[str], most: int) -> dict[str, Any]:
    item = _object(
        {
            "text": _string(8),
            "claim_type": {"enum": claim_types},
            "angle": {"enum": [str(a) for a in Angle]},
            "answers": _string(3),
        }
    )
    return _object({"sub_questions": {"type": "array", "items": item, "minItems": 1, "maxItems": most}})


QUERIES_SCHEMA = _object({"queries": {"type": "array", "items": _string(2), "minItems": 1, "maxItems": 3}})


def select_schema(candidates: int) -> dict[str, Any]:
    """The numbers of the candidates to fetch, each with an optional short reason."""
    pick = _object({"candidate": {"enum": list(range(1, candidates + 1))}, "reason": {"type": "string"}})
    return _object({"fetch": {"type": "array", "items": pick, "minItems": 0, "maxItems": candidates}})


VERIFY_SCHEMA = _object(
    {
        "verdict": {"enum": [str(v) for v in Verdict]},
        "reason": _string(3),
        "corroboration_query": {"type": "string"},
    }
)
WRITE_SCHEMA = _object({"markdown": _string(20)})


def consolidate_schema(candidates: int, fewest: int, most: int) -> dict[str, Any]:
    """The numbers of the sentences that best answer, each with what it states (held to its quote)."""
    pick = _object({"sentence": {"enum": list(range(1, candidates + 1))}, "text": {"type": "string"}})
    return _object({"claims": {"type": "array", "items": pick, "minItems": fewest, "maxItems": most}})


def critic_schema(sub_question_ids: list[str]) -> dict[str, Any]:
    gap = _object(
        {
            "about": _string(3),
            "query": _string(2),
            "sq": {"enum": [*sub_question_ids, "none"]},
            "material": {"type": "boolean"},
        }
    )
    return _object({"gaps": {"type": "array", "items": gap, "maxItems": 5}})


def parse_json_reply(text: str | None) -> Any | None:
    """The JSON value in a model reply, or None: <think> blocks, code fences and trailing text stripped."""
    if not text:
        return None
    text = _THINK_RE.sub("", text)
    if re.search(r"(?i)</think>", text):  # an opening tag the server swallowed: drop everything before
        text = re.split(r"(?i)</think>", text)[-1]
    candidates = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            return json.loads(candidate)
        except ValueError:
            pass
        for match in re.finditer(r"[\[{]", candidate):
            try:
                value, _ = decoder.raw_decode(candidate[match.start() :])
            except ValueError:
                continue
            if isinstance(value, dict | list):
                return value
    return None


def template_strings(example: str) -> frozenset[str]:
    """The quoted strings of a prompt's reply example (`"..."`, `"<source id>"`): echoing one is no answer."""
    return frozenset(_fold(s) for s in _EXAMPLE_STRING_RE.findall(example))


def _fold(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def placeholder(value: Any, template: frozenset[str] = frozenset(), instructions: str = "") -> str | None:
    """Why a free-text value carries nothing (a `ModelRejection`), or None when it is real text."""
    text = _fold(value) if isinstance(value, str) else ""
    if not text:
        return ModelRejection.EMPTY
    if _NO_CONTENT_RE.match(text) or _BRACKET_TOKEN_RE.match(text) or text.strip(".…") == "":
        return ModelRejection.PLACEHOLDER
    if text in VOCABULARY_WORDS or text in template:
        return ModelRejection.PLACEHOLDER
    if len(text) >= 24 and text in _fold(instructions):
        return ModelRejection.PLACEHOLDER  # a line of the instructions repeated back
    return None


# Fields a reply may leave out or get wrong without losing its use: the stage fills in or corrects them.
OPTIONAL_FIELDS = frozenset(
    {"answers", "angle", "claim_type", "confidence", "corroboration_query", "sq", "material"}
)
# Fields a reply must have but whose wrong value is judged per item, not by refusing the whole reply (a pick
# naming no numbered candidate is dropped on its own).
PER_ITEM_FIELDS = frozenset({"sentence", "candidate"})


def _relaxed_property(name: str, sub: Any, optional: frozenset[str]) -> Any:
    if name in optional or name in PER_ITEM_FIELDS:
        return {}
    return relaxed(sub, optional)


def relaxed(schema: Any, optional: frozenset[str] = OPTIONAL_FIELDS) -> Any:
    """The schema replies are held to: the strict one sent to the server, less what a stage can fill in
    (optional fields may be absent or off-list, other keys are ignored, long lists are cut by the stage, a
    list shorter than asked for is used)."""
    if isinstance(schema, list):
        return [relaxed(item, optional) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # A list asked for at least a few (picks) is used as it comes: fewer is still an answer.
    out = {
        k: relaxed(v, optional)
        for k, v in schema.items()
        if k not in ("additionalProperties", "maxItems") and not (k == "minItems" and v > 1)
    }
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {
            name: _relaxed_property(name, sub, optional) for name, sub in schema["properties"].items()
        }
        out["required"] = [name for name in schema.get("required", []) if name not in optional]
    return out


def schema_problem(value: Any, schema: dict[str, Any], optional: frozenset[str] = frozenset()) -> str | None:
    """The first way `value` departs from `schema` (relaxed; `optional`: more fields it may lack), or None."""
    validator = jsonschema().Draft202012Validator(relaxed(schema, OPTIONAL_FIELDS | optional))
    error = next(iter(sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return f"{where}: {error.message[:200]}"


def read_reply(
    text: str, truncated: bool, schema: dict[str, Any], optional: frozenset[str] = frozenset()
) -> tuple[Any, str | None, str]:
    """(value, None, "") for a usable reply; (None, ModelRejection, detail) otherwise."""
    if truncated:
        return None, ModelRejection.TRUNCATED, "the reply was cut off at the answer's token limit"
    if not text or not text.strip():
        return None, ModelRejection.EMPTY, "the reply was empty"
    value = parse_json_reply(text)
    if value is None:
        return None, ModelRejection.NOT_JSON, f"not JSON: {' '.join(text.split())[:120]!r}"
    problem = schema_problem(value, schema, optional)
    if problem is not None:
        return None, ModelRejection.SCHEMA, problem
    return value, None, ""
