"""Bounded inputs: every file the tools read has a size cap, YAML has no alias bombs, JSON and YAML have a
depth limit.

- `read_bytes(path, cap)`: at most `cap` bytes of a file, or BadInput (exit 2) naming the cap. Never an
  unbounded `read()`: a character device (`/dev/zero`) or a pipe is read in chunks and refused one byte
  past the cap; a FIFO with no writer is not waited for at open. `read_text` decodes UTF-8 (BOM dropped).
  `read_input(path, what)` is `read_bytes` where `-` names standard input (same cap).
  `head_bytes(path, cap)` reads only the first `cap` bytes (robots.txt: RFC 9309 parses the first 500 KiB).
- `load_yaml(text)`: YAML through a SafeLoader that refuses aliases beyond `MAX_ALIASES` and documents
  that would expand beyond `MAX_YAML_NODES` nodes (the "billion laughs" bomb), nesting deeper than
  `MAX_DEPTH`, and (`unique_keys=True`, briefs) a key given twice in one mapping, naming it.
  `front_matter(text)` splits Markdown with YAML front matter the way python-frontmatter does.
- `load_json(data)`: JSON with nesting deeper than `MAX_DEPTH` refused (BadInput, not a RecursionError).

The caps (`CAPS`) are documented in docs/conventions.md. Part of the base layer: no I/O beyond the file
being read, no knowledge of runs.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from research_engine import libraries
from research_engine.errors import BadInput

KiB, MiB = 1024, 1024 * 1024
# The size cap of each kind of file the tools read (docs/conventions.md, "Input limits").
CAPS: dict[str, int] = {
    "brief": 1 * MiB,  # brief check / lock / run BRIEF
    "candidates": 16 * MiB,  # select log --candidates FILE
    "deliverable": 8 * MiB,  # report check / finish FILE
    "page": 32 * MiB,  # extract FILE (HTML, text or PDF)
    "robots": 500 * KiB,  # robots check --robots-file: the first 500 KiB are parsed (RFC 9309 2.5)
    "corpus document": 32 * MiB,  # a file of `corpus serve DIR`
    "artifact": 64 * MiB,  # a run's Markdown and JSON artifacts, state, caches, the cassette index
    "log": 256 * MiB,  # append-only logs (consolidate/claims.jsonl, .state/spend.jsonl)
    "snapshot": 64 * MiB,  # raw bytes kept in snapshots/ and cassette bodies
}
MAX_DEPTH = 64  # nesting of JSON and YAML inputs (real ones stay under 10)
MAX_ALIASES = 100  # YAML aliases in one document (tools write none)
MAX_YAML_NODES = 200_000  # nodes of one YAML document with every alias expanded
_CHUNK = 64 * KiB


def _shown(path: Path | str) -> str:
    text = str(path)
    return text if len(text) <= 160 else text[:120] + "..." + text[-20:]


def _os_error(path: Path | str, exc: OSError, what: str) -> BadInput:
    if exc.errno == errno.ENOENT:
        return BadInput(f"{what} not found: {_shown(path)}", code="unreadable-file", field="file")
    if exc.errno == errno.ENAMETOOLONG:
        return BadInput(
            f"path too long for the file system: {_shown(path)}", code="path-too-long", field="file"
        )
    if exc.errno == errno.EISDIR:
        return BadInput(
            f"{what} {_shown(path)} is a directory, not a file", code="unreadable-file", field="file"
        )
    return BadInput(
        f"cannot read {what} {_shown(path)}: {exc.strerror or exc}", code="unreadable-file", field="file"
    )


def _too_large(path: Path | str, what: str, cap: int) -> BadInput:
    return BadInput(
        f"{what} {_shown(path)} is larger than its {cap // KiB} KiB cap; refusing to read it",
        code="input-too-large",
        field="file",
        data={"cap_bytes": cap},
    )


@contextlib.contextmanager
def _opened(path: Path | str, what: str) -> Any:
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not hang; reads are blocking again below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise _os_error(path, exc, what) from exc
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise _os_error(path, OSError(errno.EISDIR, "is a directory"), what)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        yield fd, mode
    finally:
        os.close(fd)


def _read_upto(fd: int, limit: int, path: Path | str, what: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        try:
            chunk = os.read(fd, min(_CHUNK, limit - size))
        except OSError as exc:
            raise _os_error(path, exc, what) from exc
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_bytes(path: Path | str, what: str = "artifact", *, cap: int | None = None) -> bytes:
    """The file's bytes, at most `cap` (default `CAPS[what]`); BadInput beyond it or when unreadable."""
    limit = CAPS[what] if cap is None else cap
    with _opened(path, what) as (fd, mode):
        if stat.S_ISREG(mode) and os.fstat(fd).st_size > limit:
            raise _too_large(path, what, limit)
        data = _read_upto(fd, limit + 1, path, what)
    if len(data) > limit:
        raise _too_large(path, what, limit)
    return data


STDIN = "-"  # the path that names standard input for the commands that take scratch input


def read_input(path: Path | str, what: str) -> bytes:
    """`read_bytes`, except that `-` reads standard input under the same cap (an agent passes a brief, the
    candidates or the deliverable in a quoted heredoc, so it never writes a scratch file)."""
    if str(path) != STDIN:
        return read_bytes(path, what)
    limit = CAPS[what]
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise BadInput(f"no standard input to read the {what} from", code="unreadable-file", field="file")
    try:
        data = stream.read(limit + 1)  # at most one byte past the cap, however much is offered
    except OSError as exc:
        raise _os_error("(stdin)", exc, what) from exc
    if len(data) > limit:
        raise _too_large("(stdin)", what, limit)
    return data


def head_bytes(path: Path | str, what: str, *, cap: int | None = None) -> bytes:
    """At most the first `cap` bytes of the file (the rest is never read)."""
    limit = CAPS[what] if cap is None else cap
    with _opened(path, what) as (fd, _mode):
        return _read_upto(fd, limit, path, what)


def read_text(path: Path | str, what: str = "artifact", *, cap: int | None = None) -> str:
    """The file as UTF-8 text (a BOM dropped); BadInput when it is not UTF-8."""
    data = read_bytes(path, what, cap=cap)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"{what} {_shown(path)} is not UTF-8 text", code="unreadable-file", field="file"
        ) from exc


def chunks(path: Path | str, what: str = "snapshot") -> Iterator[bytes]:
    """The file's bytes in chunks, under its cap (BadInput past it): for hashing without holding it all."""
    limit = CAPS[what]
    with _opened(path, what) as (fd, _mode):
        size = 0
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return
            size += len(chunk)
            if size > limit:
                raise _too_large(path, what, limit)
            yield chunk


def sha256_file(path: Path | str, what: str = "snapshot") -> str:
    """The sha256 of the file's bytes, streamed under its cap (BadInput past it or when unreadable)."""
    digest = hashlib.sha256()
    for chunk in chunks(path, what):
        digest.update(chunk)
    return digest.hexdigest()


def holds_digest(path: Path | str, digest: str, what: str = "snapshot") -> bool:
    """Whether the file's bytes still have `digest` (False when unreadable or over its cap)."""
    try:
        return sha256_file(path, what) == digest
    except (BadInput, OSError):
        return False


def content_mismatch(path: Path | str, actual: str, what: str = "content-addressed file") -> BadInput:
    """The refusal for a file named by a digest its bytes no longer have (edited, truncated, swapped)."""
    name = Path(path).name
    return BadInput(
        f"{what} {path} has been altered: it is named for sha256 {name} but its bytes have sha256 "
        f"{actual}; it is not used (restore it from where the run was recorded)",
        code="digest-mismatch",
        data={"path": str(path), "expected": name, "actual": actual},
    )


# ------------------------------------------------------------------------------------------------ JSON


def _depth_ok(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def load_json(data: bytes | str, what: str = "JSON", *, max_depth: int = MAX_DEPTH) -> Any:
    """Parsed JSON; BadInput (never a RecursionError) when it is malformed or nested too deeply."""
    try:
        value = json.loads(data)
    except RecursionError as exc:
        raise BadInput(f"{what} is nested too deeply (limit {max_depth})", code="too-deep") from exc
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise BadInput(f"{what} is not valid JSON: {exc}", code="malformed-json") from exc
    if not _depth_ok(value, max_depth):
        raise BadInput(f"{what} is nested too deeply (limit {max_depth})", code="too-deep")
    return value


# ------------------------------------------------------------------------------------------------ YAML


class YamlRefused(ValueError):
    """A YAML document refused for its shape (aliases, expansion, depth, a repeated key)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@functools.cache
def _loader(unique_keys: bool) -> Any:
    yaml = libraries.yaml()
    safe: Any = yaml.SafeLoader

    class BoundedLoader(safe):
        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self._aliases = 0
            self._depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise YamlRefused(f"more than {MAX_ALIASES} aliases in one YAML document")
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise YamlRefused(f"YAML nested deeper than {MAX_DEPTH} levels")
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_document(self, node: Any) -> Any:
            _check_expansion(node)
            return super().construct_document(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if unique_keys and isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _value in node.value:
                    if isinstance(key_node, yaml.ScalarNode):
                        key = key_node.value
                        if key in seen:
                            line = key_node.start_mark.line + 1
                            raise YamlRefused(f"the key {key!r} is given twice (line {line})", key=str(key))
                        seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return BoundedLoader


def _check_expansion(root: Any) -> None:
    """Refuse a node graph that expands (aliases followed) beyond MAX_YAML_NODES nodes, or loops."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    # Iterative post-order walk; a node reached twice (through an alias) is counted once per reference.
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_NODES:
                raise YamlRefused(f"the YAML document expands beyond {MAX_YAML_NODES} nodes (an alias bomb?)")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlRefused("the YAML document refers to itself through an alias")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    out: list[Any] = []
    for item in value:
        if isinstance(item, tuple):
            out.extend(item)
        else:
            out.append(item)
    return out


def load_yaml(text: str, *, unique_keys: bool = False) -> Any:
    """YAML through the bounded SafeLoader. Raises YamlRefused for a refused shape and yaml.YAMLError for
    malformed YAML (callers turn both into BadInput with their own context)."""
    loader = _loader(unique_keys)(text)
    try:
        return loader.get_single_data()
    except RecursionError as exc:
        raise YamlRefused(f"YAML nested deeper than {MAX_DEPTH} levels") from exc
    finally:
        loader.dispose()


FM_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)  # python-frontmatter's YAML boundary


def front_matter(text: str, *, unique_keys: bool = False) -> tuple[dict[str, Any], str]:
    """(metadata, content) of Markdown with YAML front matter, split as python-frontmatter splits it: a
    document that does not open with `---` has no metadata; front matter that is not a mapping reads as
    none. Errors as `load_yaml`."""
    text = text.strip()
    if not FM_BOUNDARY.match(text):
        return {}, text
    try:
        _, fm, content = FM_BOUNDARY.split(text, 2)
    except ValueError:
        return {}, text
    data = load_yaml(fm, unique_keys=unique_keys)
    return (dict(data) if isinstance(data, dict) else {}), content.strip()
