"""The candidates files: `select/SQ-NN.candidates.json`, what every search offered a sub-question.

- `record_candidates` (and `record_search` / `record_works_search` for the two
  search kinds): a search's Candidates, the backend chain and the request
  facts appended to `select/SQ-NN.candidates.json` (never overwriting earlier
  queries), with every raw answer kept in `snapshots/`: where the candidates
  came from is part of the trust log.

The only writer of candidates files; `load_candidates` reads them back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from research_engine import bounded, excerpts, runrecord, schemas
from research_engine.errors import BadInput
from research_engine.retrieve.store import store_snapshot
from research_engine.sources.candidate import Candidate
from research_engine.sources.endpoints import ApiResponse
from research_engine.sources.openalex import WorkSearch
from research_engine.trace import Run, atomic_write_text, iso

if TYPE_CHECKING:
    from research_engine.sources.search import SearchOutcome

CANDIDATES_SCHEMA_VERSION = 1


def record_candidates(
    run: Run,
    sq: str,
    *,
    command: str,
    query: str,
    candidates: list[Candidate],
    responses: list[ApiResponse],
    backend: str | None,
    chain: list[dict[str, Any]] | None = None,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append one query's candidates to `select/SQ-NN.candidates.json`; returns the appended entry."""
    path = run.path("candidates", sq=sq)  # validates the SQ id
    requests = []
    for response in responses:
        store_snapshot(run, response.body, response.sha256)
        requests.append({**response.to_dict(), "snapshot": f"snapshots/{response.sha256}"})
    with run.lock():
        document = read_candidates_file(run, sq) or {
            "schema_version": CANDIDATES_SCHEMA_VERSION,
            "sub_question": sq,
            "queries": [],
            "candidates": [],
        }
        entry = {
            "id": f"Q-{len(document['queries']) + 1:02d}",
            "at": iso(),
            "command": command,
            "query": query,
            "backend": backend,
            "chain": chain or [],
            "requests": requests,
            "info": info or {},
            "candidates": [c.to_dict() for c in candidates],
        }
        document["queries"].append(entry)
        # The flattened view `select` reads directly ({"candidates": [...]}), each tagged with its query.
        document["candidates"] = [
            {**c, "extra": {**c.get("extra", {}), "query_id": q["id"]}}
            for q in document["queries"]
            for c in q["candidates"]
        ]
        problems = schemas.validate(document, "candidate-log", file=run.relative(path))
        if problems:
            raise BadInput(
                f"refusing to write an invalid candidates file: {problems[0].message}",
                code="invalid-artifact",
            )
        atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return entry


def record_search(
    run: Run, sq: str, outcome: SearchOutcome, *, query: str, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A web search's outcome as one query's candidates (`info` adds to the backend's own extras)."""
    return record_candidates(
        run,
        sq,
        command="search",
        query=query,
        candidates=outcome.candidates,
        responses=outcome.responses,
        backend=outcome.backend,
        chain=[a.to_dict() for a in outcome.chain],
        info={**outcome.info, **(info or {})},
    )


def record_works_search(
    run: Run, sq: str, found: WorkSearch, *, query: str, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An OpenAlex works search as one query's candidates, with its filter, total and rate limit."""
    return record_candidates(
        run,
        sq,
        command="openalex search",
        query=query,
        candidates=found.candidates(),
        responses=found.pages,
        backend="openalex",
        info={
            "filter": found.filter,
            "total_count": found.total_count,
            "rate_limit": found.rate_limit,
            **(info or {}),
        },
    )


def recorded_query(run: Run, sq: str, client: Any, entry: dict[str, Any]) -> dict[str, str]:
    """What a command that recorded `entry` reports under data["recorded"]; notes the client's overrides."""
    runrecord.note_overrides(run, client)
    return {"file": run.relative(run.path("candidates", sq=sq)), "query_id": entry["id"]}


# What the agent adds to a recorded search result it names by reference.
JUDGEMENT_FIELDS = ("reason", "verdict_hint", "source_type", "access_tier")


def resolve_references(run: Run, sq: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Candidates given by reference (`{"ref": "Q-02#3", "reason": ...}`) filled in with every field their
    search recorded for `sq`, the agent's judgement on top; candidates given in full pass unchanged.
    BadInput (exit 2) naming the recorded ids when a reference names no recorded result."""
    if not any(item.get("ref") for item in items):
        return items
    recorded: dict[str, dict[str, Any]] = {}
    for query in (read_candidates_file(run, sq) or {}).get("queries", []):
        for cand in query.get("candidates", []):
            if isinstance(cand.get("rank"), int):
                recorded.setdefault(candidate_ref(query["id"], cand["rank"]), cand)
    out = []
    for item in items:
        ref = item.get("ref")
        if not ref:
            out.append(item)
            continue
        found = recorded.get(str(ref))
        if found is None:
            raise BadInput(
                f"{ref} names no search result recorded for {sq}; recorded: {_ranges(recorded)}",
                code="unknown-candidate",
                field="candidates",
                data={"known": list(recorded)},
            )
        judgement = {k: item[k] for k in JUDGEMENT_FIELDS if item.get(k) is not None}
        out.append({**{k: v for k, v in found.items() if k != "extra"}, **judgement, "ref": str(ref)})
    return out


def _ranges(refs: dict[str, Any]) -> str:
    """`Q-01#1..Q-01#10, Q-02#1..Q-02#4`: the recorded ids, one run per query."""
    by_query: dict[str, list[int]] = {}
    for ref in refs:
        query, rank = ref.split("#")
        by_query.setdefault(query, []).append(int(rank))
    if not by_query:
        return "none yet (search with --run and --sq first)"
    return ", ".join(f"{q}#{min(r)}..{q}#{max(r)}" for q, r in by_query.items())


def candidate_ref(query_id: str, rank: int) -> str:
    """A recorded search result's id within its sub-question: the query's id and the result's rank
    (`Q-02#3`), as `select log` accepts it."""
    return f"{query_id}#{rank}"


# What a bounded envelope shows of a candidate (the candidates file keeps every field).
_VIEW_FIELDS = (
    *("rank", "title", "url", "snippet", "kind", "backend"),
    *("published", "year", "doi", "access_tier", "source_type"),
)


def candidate_view(candidate: dict[str, Any], query_id: str | None = None) -> dict[str, Any]:
    """A candidate as a model reads it: its id when recorded (`ref`), the fields that judge it, the
    snippet clipped; empty fields left out."""
    view = {k: candidate.get(k) for k in _VIEW_FIELDS if candidate.get(k) not in (None, "", [])}
    view["snippet"] = excerpts.clipped(view.get("snippet"))
    if query_id is not None and isinstance(candidate.get("rank"), int):
        view = {"ref": candidate_ref(query_id, candidate["rank"]), **view}
    return {k: v for k, v in view.items() if v is not None}


def bound_listing(data: dict[str, Any], *, bulky: tuple[str, ...] = ()) -> None:
    """A search command's envelope within the bound (`excerpts`): candidates as views with their ids
    when recorded, the backend's bulkier lists (`bulky`: OpenAlex works with their abstracts) left out when
    they do not fit, and the candidates cut as a last resort; `data["rest"]` says where the rest is."""
    recorded = data.get("recorded") or {}
    data["candidates"] = [candidate_view(c, recorded.get("query_id")) for c in data.get("candidates") or []]
    where = recorded.get("file") or "not recorded: search with --run and --sq to keep every field"
    left_out = [key for key in bulky if key in data]
    if left_out and excerpts.size(data) > excerpts.ENVELOPE_CHARS - 1200:
        for key in left_out:
            data[key] = f"left out to keep the envelope bounded; every field is in {where}"
    cut = excerpts.fit_list(data, "candidates")
    if cut is not None:
        data["rest"] = {**cut, "file": where}


def read_candidates_file(run: Run, sq: str) -> dict[str, Any] | None:
    path = run.path("candidates", sq=sq)
    if not path.is_file():
        return None
    try:
        document = bounded.load_json(bounded.read_bytes(path), str(path))
    except BadInput as exc:
        raise BadInput(exc.message, code="malformed-artifact") from exc
    if not isinstance(document, dict):
        raise BadInput(f"{path} is not a candidates file (a JSON object)", code="malformed-artifact")
    return document


def load_candidates(run: Run, sq: str) -> list[Candidate]:
    """Every candidate recorded for `sq`, in query order (extra.query_id names the query)."""
    document = read_candidates_file(run, sq) or {}
    return [Candidate.from_dict(item) for item in document.get("candidates", [])]


def check_candidates(run: Run, report: Any) -> None:
    """validate.py checker: each `select/SQ-NN.candidates.json` matches its schema; its snapshots exist."""
    for path in sorted((run.root / "select").glob("SQ-*.candidates.json")):
        report.checked_files += 1
        try:
            document = bounded.load_json(bounded.read_bytes(path), "the candidates file")
        except BadInput as exc:
            report.add(path, exc.message, "malformed-artifact")
            continue
        report.extend(schemas.validate(document, "candidate-log"), path)
        if not isinstance(document, dict):
            continue
        if document.get("sub_question") != path.name.split(".")[0]:
            report.add(
                path,
                f"sub_question {document.get('sub_question')!r} does not match the file name",
                "cross-reference",
                "sub_question",
            )
        for entry in document.get("queries", []) if isinstance(document.get("queries"), list) else []:
            for request in entry.get("requests", []) if isinstance(entry, dict) else []:
                snapshot = request.get("snapshot") if isinstance(request, dict) else None
                if isinstance(snapshot, str) and not (run.root / snapshot).is_file():
                    report.add(path, f"{entry.get('id')}: snapshot {snapshot} is missing", "cross-reference")
