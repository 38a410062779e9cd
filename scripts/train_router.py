"""Train the router's intent classifier and write it into the package.

    pip install -e '.[train]'                 # numpy and scikit-learn, for training only
    python scripts/make_routing_data.py       # data/routing/labelled.tsv from the examples
    python scripts/train_router.py            # runtime/_routing/intent_model.json.gz

A multinomial logistic regression over ``skillrt._routing.classifier.features`` (the features
the runtime computes), fitted on the ``train`` split of data/routing/labelled.tsv. The
``valid`` split (whole templates the first fits never see) picks the regularisation and fits a
temperature, so that the probabilities are calibrated for new phrasing; then the model is
refitted on both. Weights are pruned and quantised to int8 (the runtime sums them in pure
Python).

Two more kinds of rows are trained on, each with ``HAND_WEIGHT`` times a template row's weight,
since they are what people write rather than what templates make:

- ``data/routing/written-*.tsv``: requests written by hand, blind (by people who read only what
  the intents mean, never the data, the table or the classifier), as training data;
- the fresh rounds named in ``ROUNDS_TRAINED_ON``: each was measured once, before any pass
  looked at it (docs/routing.md keeps those first figures), and then joined the training data.

The ``held`` split and every other fresh round are never trained on: their accuracy is printed
and stored in the model's report, with the names of the rounds trained on (the benchmark marks
those). ``--leave-out fresh-N`` trains without that round and ``--out PATH`` writes the model
elsewhere: how ``HAND_WEIGHT`` was chosen (each trained round left out in turn, measured on it).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "routing"
OUT = ROOT / "runtime" / "_routing" / "intent_model.json.gz"
# Measured once each, then trained on (see the module's docstring and docs/routing.md).
ROUNDS_TRAINED_ON = tuple(f"fresh-{n}" for n in range(1, 10))
# A hand-written row counts as this many template rows. Chosen by leaving each trained round out
# in turn and measuring on it (``--leave-out``): see docs/routing.md, "Training it".
HAND_WEIGHT = 3.0
CONTEXTS: dict[str, dict[str, Any] | None] = {
    "-": None,
    "focus": {"focus": "posts/open.md", "current_file": "posts/open.md"},
    "selection": {"current_file": "posts/open.md", "has_selection": True},
    "browse": {"browsing": True},
}


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Train the router's intent classifier.")
    parser.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="ROUND",
        help="a trained round (fresh-N) to leave out of training",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the model")
    parser.add_argument(
        "--weight",
        type=float,
        default=HAND_WEIGHT,
        help="a hand-written row's weight against a template row's",
    )
    args = parser.parse_args(argv)
    try:
        import numpy as np
        from scipy.sparse import csr_matrix
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        sys.exit("training needs numpy and scikit-learn: pip install 'skillrt[train]'")
    sys.path.insert(0, str(ROOT))
    from benchmarks.bench_intents import read_rows as load
    from skillrt._routing.classifier import IntentClassifier, features

    rows = load(DATA / "labelled.tsv")
    train = [r for r in rows if r[0] in ("train", "valid")]
    held = [r for r in rows if r[0] == "held"]
    trained_on = [name for name in ROUNDS_TRAINED_ON if name not in args.leave_out]
    rounds = dict(fresh_rounds())
    hand = hand_rows(trained_on, held, rounds)
    train += hand
    classes = sorted({r[1] for r in rows})
    vocab: dict[str, int] = {}
    counts: dict[str, int] = {}
    for _, _, context, text in train:
        for f in features(text, CONTEXTS[context]):
            counts[f] = counts.get(f, 0) + 1
    for f, n in sorted(counts.items()):
        if n >= 2 or f.startswith(("w:", "c1:", "c2:", "x:")):
            vocab[f] = len(vocab)

    def matrix(part: list[tuple[str, str, str, str]]) -> Any:
        data, cols, ptr = [], [], [0]
        for _, _, context, text in part:
            found = features(text, CONTEXTS[context])
            norm = 1 / math.sqrt(max(len(found), 1))
            for f in found:
                if f in vocab:
                    cols.append(vocab[f])
                    data.append(norm)
            ptr.append(len(cols))
        return csr_matrix((data, cols, ptr), shape=(len(part), len(vocab)))

    y_of = {c: i for i, c in enumerate(classes)}

    def weights_of(part: list[tuple[str, str, str, str]]) -> Any:
        return np.array([args.weight if r[0] == "hand" else 1.0 for r in part])

    # The validation split is whole templates the first fits never see (see
    # make_routing_data.py), so C and the temperature are chosen on new phrasing; with no such
    # rows, a random tenth of the training rows.
    valid = [r for r in train if r[0] == "valid"]
    fit = [r for r in train if r[0] != "valid"]
    if not valid:
        shuffled = train[:]
        random.Random(7).shuffle(shuffled)
        cut = len(shuffled) // 10
        valid, fit = shuffled[:cut], shuffled[cut:]
    best = None
    for c in (1.0, 3.0, 10.0, 30.0):
        model = LogisticRegression(C=c, max_iter=3000)
        model.fit(matrix(fit), [y_of[r[1]] for r in fit], sample_weight=weights_of(fit))
        answers = [y_of[r[1]] for r in valid]
        acc = model.score(matrix(valid), answers)
        # Ties in accuracy (common: the validation rows are few and easy) go to the better
        # calibrated model, the lower validation log-loss.
        proba = model.predict_proba(matrix(valid))
        loss = float(-np.log(proba[np.arange(len(answers)), answers] + 1e-12).mean())
        print(f"C={c}: validation {acc:.3f}, log-loss {loss:.4f}")
        if best is None or (acc, -loss) > (best[0], best[1]):
            best = (acc, -loss, c, model)
    assert best is not None
    _, _, c, model = best
    # Temperature: minimise the validation log-loss of softmax(logits / T).
    logits = model.decision_function(matrix(valid))
    truth = np.array([y_of[r[1]] for r in valid])

    def nll(t: float) -> float:
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(truth)), truth].mean())

    temperature = min((0.1 + 0.05 * i for i in range(60)), key=nll)
    print(f"C={c}, temperature {temperature:.2f}")
    model = LogisticRegression(C=c, max_iter=3000)
    model.fit(matrix(train), [y_of[r[1]] for r in train], sample_weight=weights_of(train))
    weights = model.coef_.T  # features x classes
    scale = float(np.abs(weights).max()) / 127
    quant = np.round(weights / scale).astype(np.int8)
    keep = np.abs(quant).max(axis=1) > 0
    names = [f for f, i in sorted(vocab.items(), key=lambda kv: kv[1]) if keep[i]]
    data = {
        "classes": classes,
        "bias": [float(b) for b in model.intercept_],
        "scale": scale,
        "temperature": temperature,
        "features": "\n".join(names),
        "weights": base64.b64encode(quant[keep].tobytes()).decode("ascii"),
        "report": {},
    }
    clf = IntentClassifier(data)
    report: dict[str, Any] = {
        "train_rows": len(train),
        "hand_rows": len(hand),
        "hand_weight": args.weight,
        "trained_on": trained_on,
        "features": len(names),
        "C": c,
    }
    for name, part in [("held", held), *rounds.items()]:
        right = sum(
            max(clf.probabilities(t, CONTEXTS[ctx]).items(), key=lambda kv: kv[1])[0] == i
            for _, i, ctx, t in part
        )
        report[name] = {"rows": len(part), "accuracy": round(right / max(len(part), 1), 4)}
        print(f"{name}: {right}/{len(part)} = {right / max(len(part), 1):.3f}")
    data["report"] = report
    out = args.out
    out.write_bytes(gzip.compress(json.dumps(data, ensure_ascii=False).encode(), mtime=0))
    print(f"{len(names)} features, {out.stat().st_size / 1024:.0f} KiB -> {out}")


def key(text: str) -> str:
    """The form two requests share when they are the same request."""
    return " ".join(text.casefold().split())


def hand_rows(
    trained_on: list[str],
    held: list[tuple[str, str, str, str]],
    rounds: dict[str, list[tuple[str, str, str, str]]],
) -> list[tuple[str, str, str, str]]:
    """The hand-written rows trained on: ``written-*.tsv`` and the rounds ``trained_on``, less
    any request that is also in the held-out split or in a round not trained on (a short one,
    "hi" or "总结一下", is written by more than one hand), so those stay never trained on."""
    from benchmarks.bench_intents import read_rows

    measured = {key(t) for _, _, _, t in held}
    untrained = [part for name, part in rounds.items() if name not in trained_on]
    measured |= {key(t) for part in untrained for *_, t in part}
    written = [r for path in sorted(DATA.glob("written-*.tsv")) for r in read_rows(path)]
    written += [r for name in trained_on for r in rounds[name]]
    return [("hand", i, c, t) for _, i, c, t in written if key(t) not in measured]


def fresh_rounds() -> list[tuple[str, list[tuple[str, str, str, str]]]]:
    from benchmarks.bench_intents import read_rows, round_number

    paths = sorted(DATA.glob("fresh-*.tsv"), key=round_number)
    return [(p.stem, read_rows(p)) for p in paths]


if __name__ == "__main__":
    main()
