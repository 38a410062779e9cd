"""The router's labelled set (issue 25): it is what the script in the repository makes, its
held-out split is never trained on, and no fresh round's request is in it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks.bench_intents import read_rows

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "routing"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_routing_data", ROOT / "scripts" / "make_routing_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def test_the_labelled_set_is_what_the_script_makes(tmp_path: Path) -> None:
    script = _script()
    script.OUT = tmp_path / "labelled.tsv"
    script.main()
    assert script.OUT.read_bytes() == (DATA / "labelled.tsv").read_bytes()


def test_the_held_out_split_and_the_last_fresh_round_are_never_trained_on() -> None:
    """No held-out request is trained on in its context, and no request of round 6 (written
    before pass 6) is in the training rows at all. Earlier rounds' rows were tuned on in
    earlier passes, as docs/routing.md says: a few short ones ("总结一下") are seeds now."""
    rows = read_rows(DATA / "labelled.tsv")
    trained = {(c, t) for split, _, c, t in rows if split in ("train", "valid")}
    held = [(c, t) for split, _, c, t in rows if split == "held"]
    assert len(held) > 2000
    assert not [r for r in held if r in trained]
    texts = {_key(t) for _, t in trained}
    fresh = [t for *_, t in read_rows(DATA / "fresh-6.tsv")]
    assert len(fresh) == 236
    assert not [t for t in fresh if _key(t) in texts]


@pytest.mark.parametrize("template", ["{k}", "{s}", "{N}"])
def test_pass_6_placeholders_draw_only_when_present(template: str) -> None:
    """The earlier templates keep their rows: a placeholder of pass 6 draws from the random
    stream only in a template that has it."""
    import random

    script = _script()
    a, b = random.Random(1), random.Random(1)
    script.fill(a, "write about {t}", False, ["x", "y"])
    script.fill(b, "write about {t}", False, ["x", "y"])
    assert a.random() == b.random()
    filled = script.fill(random.Random(1), f"explain {template}", False, ["x", "y"])
    assert template not in filled
