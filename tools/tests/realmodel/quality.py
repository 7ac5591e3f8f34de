"""bench/quality.py, loaded by path (bench/ is not a package): its dev set, its Debian corpora and its scorer
serve the real-model test and bench/real_model.py as they serve the quality benchmark."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def load() -> ModuleType:
    if "bench_quality" in sys.modules:
        return sys.modules["bench_quality"]
    spec = importlib.util.spec_from_file_location("bench_quality", ROOT / "bench" / "quality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_quality"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
