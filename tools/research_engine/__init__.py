"""research-engine: a research engine that contests its own findings.

The package is the product; the `research-engine` CLI is a thin skin over it.

Modules, one per concern (see docs/architecture.md):

    trace       the run directory: ids, scaffold, artifact paths, atomic writes, the run lock
    ids         SQ-NN, SRC-NN, CLM-NN, CHL-NN, T-NN allocation, never reused
    brief       parse, default, validate and lock the brief
    schemas     the JSON Schemas in schema/ and validation against them
    validate    the whole-run check
    errors      the one error base class and the named exit codes
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
