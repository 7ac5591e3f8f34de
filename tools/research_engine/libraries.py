"""Heavy third-party libraries, each loaded on first use behind one adapter.

Claude Code calls `research-engine` dozens of times a run, and most calls (`ids next`,
`claims list`, `control`) never parse HTML, read a PDF or detect a charset: importing
trafilatura or lxml at start-up would cost every call for the benefit of a few. So the
package's own modules import each other at the top, and a heavy library is reached only
through its function here, which imports it the first time it is called (Python caches
the module after that). Each function is the one place its library is imported lazily.
"""

from __future__ import annotations

from types import ModuleType

from research_engine.errors import NotConfigured


def trafilatura() -> ModuleType:
    import trafilatura  # noqa: PLC0415 - heavy (lxml, htmldate, courlan): only extraction needs it

    return trafilatura


def trafilatura_utils() -> ModuleType:
    import trafilatura.utils  # noqa: PLC0415 - as trafilatura

    return trafilatura.utils


def readability() -> ModuleType:
    import readability  # noqa: PLC0415 - heavy (lxml): the extraction fallback only

    return readability


def lxml_html() -> ModuleType:
    import lxml.html  # noqa: PLC0415 - heavy C extension: only HTML parsing needs it

    return lxml.html


def pypdf() -> ModuleType:
    import pypdf  # noqa: PLC0415 - only an explicitly allowed PDF needs it

    return pypdf


def charset_normalizer() -> ModuleType:
    import charset_normalizer  # noqa: PLC0415 - only an undeclared charset needs detection

    return charset_normalizer


def yaml() -> ModuleType:
    import yaml  # noqa: PLC0415 - tens of ms: only commands that read or write front matter need it

    return yaml


def frontmatter() -> ModuleType:
    import frontmatter  # noqa: PLC0415 - imports yaml and more: as yaml

    return frontmatter


def jsonschema() -> ModuleType:
    import jsonschema  # noqa: PLC0415 - the slowest import of all: only writes and `validate` check schemas

    return jsonschema


def filelock() -> ModuleType:
    import filelock  # noqa: PLC0415 - pulls in asyncio: only commands that write to a run take the lock

    return filelock


def tld() -> ModuleType:
    import tld  # noqa: PLC0415 - loads the Public Suffix List: only registrable-domain lookups need it

    return tld


def markdown_it() -> ModuleType:
    import markdown_it  # noqa: PLC0415 - builds its rule tables on import: only `view` and Markdown documents

    return markdown_it


def weasyprint() -> ModuleType | None:
    """WeasyPrint (the `pdf` extra), or None when it is not installed or its system libraries are missing."""
    try:
        import weasyprint  # noqa: PLC0415 - heavy (pango through cffi): only `view --pdf` lays out a PDF
    except (ImportError, OSError):
        return None
    return weasyprint


def ray() -> ModuleType:
    """Ray, for `batch --ray` (the optional `ray` extra); NotConfigured naming the install when absent."""
    try:
        import ray  # noqa: PLC0415 - optional and heavy (grpc, protobuf): only a batch on Ray needs it
    except ImportError as exc:
        raise NotConfigured(
            "batch --ray needs Ray: pip install 'research-engine[ray]'", code="ray-missing", field="ray"
        ) from exc
    return ray


def docx() -> ModuleType:
    import docx  # noqa: PLC0415 - python-docx (lxml): only a Word document needs it

    return docx


def lxml_etree() -> ModuleType:
    import lxml.etree  # noqa: PLC0415 - heavy C extension: only XML answers (arXiv Atom, JATS) need it

    return lxml.etree


def snowballstemmer() -> ModuleType:
    import snowballstemmer  # noqa: PLC0415 - its stemmers load on first use: only the prose check needs them

    return snowballstemmer
