"""The compiled validators (research_engine._validators) agree with jsonschema, and are current.

`schemas.validate` accepts a document on the compiled validator's word alone, so the one thing that must
never happen is the compiled validator passing a document jsonschema refuses. Checked over every document
the repository holds (the committed example run, the skill bundle's front matter), against every schema
(most pairs are wrong on purpose: a loop log is not a claim), and over mutations of each document.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from research_engine import bounded, schemas

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(p.name.removesuffix(".schema.json") for p in schemas.schema_dir().glob("*.schema.json"))
ODD_VALUES: list[Any] = [None, "", "x\n", -1, 0, 1.5, True, [], {}, ["x"], {"x": 1}, "SQ-01", "CLM-01"]


def _documents() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for base in [*sorted((ROOT / "examples").glob("*/")), ROOT / ".claude"]:
        for path in sorted(base.rglob("*")):
            if not path.is_file() or "cassette" in path.parts or "snapshots" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix == ".md" and text.startswith("---"):
                found.append((rel, bounded.front_matter(text)[0]))
            elif path.suffix == ".json":
                found.append((rel, json.loads(text)))
            elif path.suffix == ".jsonl":
                found.extend((f"{rel}:{n}", json.loads(line)) for n, line in enumerate(text.splitlines(), 1))
    return found


def _mutations(document: Any, depth: int = 0) -> Iterator[Any]:
    """Each a copy of `document` with one value removed, replaced by an odd value, or one key added."""
    if depth > 3:
        return
    if isinstance(document, dict):
        yield {**document, "unexpected_field": 1}
        for key, value in document.items():
            yield {k: v for k, v in document.items() if k != key}
            for odd in ODD_VALUES:
                yield {**document, key: odd}
            for inner in _mutations(value, depth + 1):
                yield {**document, key: inner}
    elif isinstance(document, list) and document:
        yield document + [copy.deepcopy(document[0])]
        yield []
        for inner in _mutations(document[0], depth + 1):
            yield [inner, *document[1:]]
    elif isinstance(document, str):
        yield document + "\n"
        yield "x" + document


def _verdicts(document: Any, name: str) -> tuple[bool, bool]:
    compiled = schemas.compiled_validator(name)
    assert compiled is not None
    try:
        compiled(copy.deepcopy(document))
        fast = True
    except Exception:  # noqa: BLE001 - any failure means "ask jsonschema"
        fast = False
    return fast, jsonschema.Draft202012Validator(schemas.load_schema(name)).is_valid(document)


def test_every_schema_has_a_current_compiled_validator():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compile_schemas.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [name for name in NAMES if schemas.compiled_validator(name) is None] == []


def test_a_stale_compiled_validator_is_never_used(tmp_path, monkeypatch):
    edited = tmp_path / "schema"
    edited.mkdir()
    for path in schemas.schema_dir().glob("*.schema.json"):
        (edited / path.name).write_bytes(path.read_bytes())
    loop_log = edited / "loop-log.schema.json"
    loop_log.write_text(loop_log.read_text(encoding="utf-8").replace("\n", "\n ", 1), encoding="utf-8")
    monkeypatch.setattr(schemas, "schema_dir", lambda: edited)
    for cached in (schemas._schema_bytes, schemas.load_schema, schemas.compiled_validator):
        cached.cache_clear()
    try:
        assert schemas.compiled_validator("loop-log") is None
        assert schemas.compiled_validator("claim-record") is not None
    finally:
        for cached in (schemas._schema_bytes, schemas.load_schema, schemas.compiled_validator):
            cached.cache_clear()


@pytest.mark.slow
def test_the_compiled_validators_never_pass_what_jsonschema_refuses():
    documents = _documents()
    assert len(documents) > 40, "the committed example run and the bundle should give dozens of documents"
    checked, lenient, valid_pairs, refused_valid = 0, [], 0, []
    for where, document in documents:
        for name in NAMES:
            fast, slow = _verdicts(document, name)
            checked += 1
            valid_pairs += slow
            if slow and not fast:
                refused_valid.append(f"{where} as {name}")
            if fast and not slow:
                lenient.append(f"{where} as {name}")
    # The real artifacts are valid under their schemas and the compiled path says so: it is the path used.
    assert valid_pairs >= 30 and refused_valid == []
    for where, document in documents:
        own = [name for name in NAMES if _verdicts(document, name)[1]]
        for mutated in _mutations(document):
            for name in own:
                fast, slow = _verdicts(mutated, name)
                checked += 1
                if fast and not slow:
                    lenient.append(f"mutated {where} as {name}: {json.dumps(mutated)[:200]}")
    assert checked > 10_000
    assert lenient == []


def test_validate_reports_problems_from_jsonschema_when_the_compiled_validator_refuses():
    record = {"schema_version": 1, "cycle": "one"}
    problems = schemas.validate(record, "loop-log")
    assert problems, "an invalid loop log must be reported"
    assert {p.code for p in problems} <= {"missing-field", "schema-violation"}
    assert any("cycle" in (p.field or "") or "cycle" in p.message for p in problems)


def test_a_valid_document_is_accepted_without_importing_jsonschema():
    example = next((ROOT / "examples").glob("*/run.json"))
    code = (
        "import json, sys; from research_engine import schemas; "
        f"doc = json.loads(open({str(example)!r}).read()); "
        "assert schemas.validate(doc, 'run') == []; print('jsonschema' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
