"""Train the router's intent classifier and write it into the package.

    pip install -e '.[train]'                 # numpy and scikit-learn, for training only
    python scripts/make_routing_data.py       # data/routing/labelled.tsv from the examples
    python scripts/train_router.py            # runtime/_routing/intent_model.json.gz

A multinomial logistic regression over ``skillrt._routing.classifier.features`` (the features
the runtime computes), fitted on the ``train`` split of data/routing/labelled.tsv. The
``valid`` split (whole templates the first fits never see) picks the regularisation and fits a
temperature, so that the probabilities are calibrated for new phrasing; then the model is
refitted on both. Weights are pruned and quantised to int8 (the runtime sums them in pure
Python). The ``held`` split and data/routing/fresh-*.tsv are never trained on: their accuracy
is printed and stored in the model's report.
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
CONTEXTS: dict[str, dict[str, Any] | None] = {
    "-": None,
    "focus": {"focus": "posts/open.md", "current_file": "posts/open.md"},
    "selection": {"current_file": "posts/open.md", "has_selection": True},
    "browse": {"browsing": True},
}


def main() -> None:
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
        model.fit(matrix(fit), [y_of[r[1]] for r in fit])
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
    model.fit(matrix(train), [y_of[r[1]] for r in train])
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
    report: dict[str, Any] = {"train_rows": len(train), "features": len(names), "C": c}
    for name, part in [("held", held), *fresh_rounds()]:
        right = sum(
            max(clf.probabilities(t, CONTEXTS[ctx]).items(), key=lambda kv: kv[1])[0] == i
            for _, i, ctx, t in part
        )
        report[name] = {"rows": len(part), "accuracy": round(right / max(len(part), 1), 4)}
        print(f"{name}: {right}/{len(part)} = {right / max(len(part), 1):.3f}")
    data["report"] = report
    OUT.write_bytes(gzip.compress(json.dumps(data, ensure_ascii=False).encode(), mtime=0))
    print(f"{len(names)} features, {OUT.stat().st_size / 1024:.0f} KiB -> {OUT.relative_to(ROOT)}")


def fresh_rounds() -> list[tuple[str, list[tuple[str, str, str, str]]]]:
    from benchmarks.bench_intents import read_rows

    return [(p.stem, read_rows(p)) for p in sorted(DATA.glob("fresh-*.tsv"))]


if __name__ == "__main__":
    main()
