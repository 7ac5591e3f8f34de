"""The brief: the run's one configuration surface and its only human gate.

Owns parsing (YAML, Markdown with YAML front matter, or a plain Markdown request),
defaults, validation against `schema/brief.schema.json`, the intake questions for
what is missing (at most five, each with a proposed default), and the locked
`brief.md` that starts a run. It never fetches anything and never starts a run's
work; `lock` only scaffolds the trace tree and writes the first two artifacts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research_engine import __version__, bounded, libraries, runrecord, trace
from research_engine.artifacts import dump_yaml
from research_engine.errors import BadInput, Problem
from research_engine.schemas import load_schema, validate

REQUIRED = ("objective", "deliverable", "output_path")
RECOMMENDED = ("scope", "depth", "recency", "claim_types", "reproducibility", "budget")
OPTIONAL = ("known_sources", "prior_context", "avoid_sources", "format_constraints", "language")
KNOWN_FIELDS = frozenset(REQUIRED + RECOMMENDED + OPTIONAL + ("locked",))
MAX_QUESTIONS = 5

# The question asked for each field at intake, in the order they are asked.
QUESTIONS: dict[str, str] = {
    "objective": "What exactly should the research find out?",
    "output_path": "Where should the run directory be written?",
    "deliverable": "What form should the deliverable take (memo, brief, comparison table, report)?",
    "depth": "How deep: quick (1 cycle), standard (2) or deep (3)?",
    # Asked before scope and recency: the claim types decide which sources fit, and a programming question
    # answered as "factual, quantitative" is sent to the wrong kinds of source.
    "claim_types": "Which kinds of claims matter: factual, quantitative, regulatory, competitive, technical?",
    "scope": "What is in and out of scope (geography, sector, period, population)?",
    "recency": "How recent must the evidence be (any, or e.g. 18m, 5y)?",
    "reproducibility": "Must every claim be re-checkable for free (reproducible), or are gated sources fine "
    "when named (checkable)?",
    "budget": "Any limits on provider calls, fetched bytes, model tokens or wall-clock time?",
}
PROPOSED_REQUIRED = {"output_path": "runs", "deliverable": "a cited research memo"}

# What in an objective's wording suggests each claim type (proposed at intake, and the default when the brief
# names none). Words, not topics: a question naming code, a command or a software term asks technical claims.
CLAIM_TYPE_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "technical",
        re.compile(
            r"`|\w\(\)|\w_\w|\b\w+\*|\b(?:python|java(?:script)?|rust|golang|c\+\+|sql|postgres\w*|sqlite|django|"
            r"linux|git|docker|kubernetes|api|apis|sdk|library|libraries|framework|module|package|function|"
            r"method|class|syntax|clause|statement|exception|compiler|interpreter|runtime|database|query|"
            r"queries|index|server|protocol|http|configur\w*|setting|install\w*|command|option|flag|code|"
            r"software|programming|thread\w*|async\w*|process(?:es)?)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "quantitative",
        re.compile(
            r"\bhow (?:many|much|large|big|fast|often|long)\b|\b(?:number of|share|rate|percent\w*|gdp|"
            r"growth|population|cost|price|revenue|statistic\w*|trend|figure)s?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "regulatory",
        re.compile(r"\b(?:law|regulat\w*|legal|complian\w*|directive|statute|gdpr|licen[cs]\w*)s?\b", re.I),
    ),
    ("competitive", re.compile(r"\b(?:competitor|competitive|market|vendor|pricing)s?\b", re.IGNORECASE)),
)


def proposed_claim_types(objective: str) -> list[str]:
    """The claim types an objective's wording asks for, factual always among them; factual and
    quantitative (the schema's default) when nothing in the wording points elsewhere."""
    found = [kind for kind, cue in CLAIM_TYPE_CUES if cue.search(objective or "")]
    if not found:
        return list(defaults()["claim_types"])
    return [*found[:1], "factual", *found[1:]] if "factual" not in found else found


@dataclass
class BriefReport:
    """What `check` found: the brief as parsed, its problems, warnings and intake questions."""

    fields: dict[str, Any]
    source_format: str
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    defaulted: list[str] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.ok,
            "source_format": self.source_format,
            "fields": self.fields,
            "defaulted": self.defaulted,
            "warnings": [w.to_dict() for w in self.warnings],
            "problems": [p.to_dict() for p in self.problems],
            "questions": self.questions,
        }


def defaults() -> dict[str, Any]:
    props = load_schema("brief")["properties"]
    return {name: copy.deepcopy(props[name]["default"]) for name in RECOMMENDED + ("language",)}


def read_brief_file(path: str | Path) -> tuple[dict[str, Any], str]:
    """Parse a brief file; returns (fields, format) where format is yaml, front-matter or markdown.

    `-` reads the brief from stdin (an agent passes it in a quoted heredoc, so it never writes a file):
    YAML front matter, a bare YAML mapping of brief fields, or a plain request.
    """
    yaml = libraries.yaml()

    p = Path(path)
    try:
        raw = bounded.read_input(p, "brief")
    except BadInput as exc:
        if exc.code in ("input-too-large", "path-too-long"):
            raise
        message = exc.message
        if " " in str(path).strip() and not p.exists():  # a question typed where the brief's file goes
            message += (
                " (a brief is a YAML file naming at least objective, deliverable and output_path;"
                " `research-engine brief check FILE` says what one lacks)"
            )
        raise BadInput(message, code="unreadable-brief", field="file") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"brief {p} is not UTF-8 text", code="unreadable-brief", field="file") from exc
    if not text.strip():
        raise BadInput(f"brief {p} is empty", code="empty-brief", field="file")

    suffix = p.suffix.lower()
    if suffix in (".yaml", ".yml", ".json"):
        try:
            data = bounded.load_yaml(text, unique_keys=True)
        except bounded.YamlRefused as exc:
            raise _refused_yaml(p, exc) from exc
        except yaml.YAMLError as exc:
            raise BadInput(f"brief {p} is not valid YAML: {_yaml_where(exc)}", code="malformed-yaml") from exc
        if not isinstance(data, dict):
            raise BadInput(
                f"brief {p} must be a YAML mapping of fields, not {type(data).__name__}",
                code="malformed-brief",
            )
        return _stringify_keys(data), "yaml"

    stripped = text.lstrip()
    if str(path) == bounded.STDIN and not stripped.startswith("---"):
        try:
            data = bounded.load_yaml(text, unique_keys=True)
        except bounded.YamlRefused as exc:
            raise _refused_yaml(p, exc) from exc
        except yaml.YAMLError:
            data = None
        if isinstance(data, dict) and data and {str(k) for k in data} <= KNOWN_FIELDS:
            return _stringify_keys(data), "yaml"
    if stripped.startswith("---"):
        try:
            data, body = bounded.front_matter(stripped, unique_keys=True)
        except bounded.YamlRefused as exc:
            raise _refused_yaml(p, exc) from exc
        except yaml.YAMLError as exc:
            raise BadInput(
                f"brief {p} has malformed YAML front matter: {_yaml_where(exc)}", code="malformed-yaml"
            ) from exc
        if body and "objective" not in data:
            data["objective"] = _request_text(body)
        elif body and "prior_context" not in data:
            data["prior_context"] = body
        return _stringify_keys(data), "front-matter"

    return {"objective": _request_text(text)}, "markdown"


def _refused_yaml(path: Path, exc: bounded.YamlRefused) -> BadInput:
    """A brief whose YAML is refused for its shape: a repeated key (named, field-level), an alias bomb, too
    deep a nesting."""
    if exc.key is not None:
        message = f"brief {path}: {exc}; give each field once"
        problem = Problem("duplicate-key", message, field=exc.key)
        return BadInput(message, code="duplicate-key", field=exc.key, problems=[problem])
    return BadInput(f"brief {path} is refused: {exc}", code="refused-yaml")


def _stringify_keys(data: dict) -> dict[str, Any]:
    return {str(k): v for k, v in data.items()}


def _request_text(text: str) -> str:
    """A plain request file: drop Markdown heading marks, keep the words."""
    lines = [line.lstrip("#").strip() for line in text.strip().splitlines()]
    return " ".join(line for line in lines if line).strip()


def _yaml_where(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(problem)


def check_fields(fields: dict[str, Any], source_format: str = "yaml") -> BriefReport:
    """Validate brief fields, fill defaults and work out the intake questions."""

    report = BriefReport(fields=dict(fields), source_format=source_format)
    for name in sorted(set(fields) - KNOWN_FIELDS):
        report.warnings.append(
            Problem("unknown-field", f"unknown field {name!r} is kept but not used by the engine", field=name)
        )
    report.problems = validate(fields, "brief")

    filled = dict(fields)
    proposals = {**defaults(), "claim_types": proposed_claim_types(str(fields.get("objective") or ""))}
    for name, value in proposals.items():
        if name not in filled:
            filled[name] = value
            report.defaulted.append(name)
        elif name == "budget" and isinstance(filled[name], dict):
            merged = dict(value)
            merged.update(filled[name])
            filled[name] = merged
    report.fields = filled

    bad_fields = {p.field for p in report.problems}
    asked: list[dict[str, Any]] = []
    for name in QUESTIONS:
        if len(asked) >= MAX_QUESTIONS:
            break
        if name in REQUIRED and (name not in fields or name in bad_fields):
            asked.append(
                {
                    "field": name,
                    "question": QUESTIONS[name],
                    "proposed": PROPOSED_REQUIRED.get(name),
                    "required": True,
                }
            )
        elif name in bad_fields or name in report.defaulted:
            asked.append(
                {
                    "field": name,
                    "question": QUESTIONS[name],
                    "proposed": proposals.get(name),
                    "required": False,
                }
            )
    report.questions = asked
    return report


def check_file(path: str | Path) -> BriefReport:
    fields, fmt = read_brief_file(path)
    return check_fields(fields, fmt)


def render_locked(fields: dict[str, Any]) -> str:
    """brief.md: YAML front matter holding every field, then a readable summary."""
    front = dump_yaml(fields)
    defaulted = set(fields.get("locked", {}).get("defaults", []))
    lines = ["---", front.rstrip(), "---", "", "# Research brief", ""]
    lines.append(f"**Objective.** {fields['objective']}")
    lines.append("")
    for name in ("deliverable", "output_path") + RECOMMENDED + OPTIONAL:
        if name not in fields or name == "objective":
            continue
        value = fields[name]
        if isinstance(value, list):
            shown = ", ".join(map(str, value)) or "(none)"
        elif isinstance(value, dict):
            shown = ", ".join(f"{k}={v}" for k, v in value.items())
        else:
            shown = str(value)
        mark = " *(default)*" if name in defaulted else ""
        lines.append(f"- **{name}**: {shown}{mark}")
    lines.append("")
    lines.append("This file is written by `research-engine brief lock`; it is the run's only human gate.")
    return "\n".join(lines) + "\n"


def digest_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class LockedBrief:
    run_root: Path
    run_id: str
    fields: dict[str, Any]
    digest: str


def checked(path: str | Path, output_path: str | None = None) -> BriefReport:
    """The brief as `lock` would lock it (`output_path` overriding its own); BadInput when it is not valid."""
    report = check_file(path)
    if output_path:
        report.fields["output_path"] = str(output_path)
        report.problems = [p for p in report.problems if p.field != "output_path"]
    if not report.ok:
        raise BadInput(
            f"brief {path} is not valid: " + "; ".join(p.message for p in report.problems),
            code="invalid-brief",
            problems=report.problems,
            data={"questions": report.questions},
        )
    return report


def lock(
    path: str | Path,
    output_path: str | None = None,
    *,
    allow_private: bool = False,
    allow_hosts: Sequence[str] = (),
) -> LockedBrief:
    """Validate the brief and start a run: scaffold the tree, write brief.md and run.json (with the
    run's private-address opt-ins: `allow_private`, and `allow_hosts`, entries the caller normalized with
    `net.policy.allow_host_entries`)."""
    hosts = list(allow_hosts)

    report = checked(path, output_path)
    fields = report.fields
    fields["locked"] = {
        "at": trace.iso(),
        "tool_version": __version__,
        "defaults": report.defaulted,
        "unknown_fields": sorted(set(fields) - KNOWN_FIELDS),
        "source_file": "(stdin)" if str(path) == "-" else Path(path).name,
    }
    run = trace.scaffold(fields["output_path"], trace.make_run_id(fields["objective"]))
    text = render_locked(fields)
    with run.lock():
        run.write_text("brief", text)
        runrecord.create(
            run,
            fields,
            digest_text(text),
            budgets=budget_of(fields),
            allow_private=allow_private,
            allow_hosts=hosts,
        )
    return LockedBrief(run_root=run.root, run_id=run.run_id, fields=fields, digest=digest_text(text))


def load_locked(run_root: Path) -> dict[str, Any]:
    """The locked brief's fields, from brief.md's front matter."""
    path = Path(run_root) / "brief.md"
    if not path.is_file():
        raise BadInput(f"no locked brief at {path}", code="unknown-run")
    try:
        meta, _ = bounded.front_matter(bounded.read_text(path, "brief"))
    except BadInput as exc:
        raise BadInput(f"locked brief {path} is unreadable: {exc.message}", code="malformed-brief") from exc
    except Exception as exc:  # yaml errors and friends: the file was edited by hand
        raise BadInput(f"locked brief {path} is unreadable: {exc}", code="malformed-brief") from exc
    if not meta.get("objective"):  # a front matter that is not a mapping reads as no fields
        raise BadInput(
            f"locked brief {path} has no front matter fields (no objective)", code="malformed-brief"
        )
    return meta


def budget_of(fields: dict[str, Any]) -> dict[str, int]:
    merged = defaults()["budget"]
    merged.update(fields.get("budget") or {})
    return merged


def json_dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)
