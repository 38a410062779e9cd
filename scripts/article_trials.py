"""Ask the embedded model for one article once per sampling seed, and count what was saved.

    python scripts/article_trials.py "写一篇关于 Rust 所有权的短文" --seeds 0-7
    python scripts/article_trials.py "write an article about git rebase" --seeds 0,5

Each trial runs ``process_input`` on a fresh copy of the test blog (``tests/blog``) with the
embedded SmolLM2-135M (extra ``local``) at that seed; skillrt itself uses seed 0. It prints a
line per trial: saved (the path and the sections that stopped at a loop) or refused (the
check and its reason), then the count. A trial takes one to three minutes on 2 cores. These
are the figures docs/writing.md gives for the embedded model's Chinese articles.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillrt import AgentRuntime, load_config
from skillrt.llm.local import LocalProvider
from tests.blog import copy_blog


def seeds(text: str) -> list[int]:
    """``0-7`` or ``0,5,9``."""
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.extend(range(int(low), int(high or low) + 1))
    return out


async def trial(request: str, seed: int, root: Path) -> bool:
    blog = copy_blog(root / "blog")
    state = root / "state"
    config = load_config(content_root=blog, state_dir=state)
    rt = AgentRuntime(config, llm=LocalProvider(seed=seed, state_dir=state))
    started = time.perf_counter()
    try:
        msg = await rt.process_input(request)
    finally:
        await rt.close()
    took = time.perf_counter() - started
    saved = msg.state == "COMPLETED" and bool(msg.data.get("path"))
    if saved:
        stopped = msg.data.get("stopped_sections") or []
        print(f"seed {seed}: saved {msg.data['path']} in {took:.0f} s; stopped: {stopped}")
    else:
        why = f"{msg.data.get('check')}: {msg.data.get('reason')}"
        print(f"seed {seed}: refused in {took:.0f} s ({why})")
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("request")
    parser.add_argument("--seeds", default="0-7", help="0-7 or 0,5,9 (default 0-7)")
    args = parser.parse_args()
    chosen = seeds(args.seeds)
    saved = 0
    for seed in chosen:
        with tempfile.TemporaryDirectory() as tmp:
            saved += asyncio.run(trial(args.request, seed, Path(tmp)))
    print(f"{saved} of {len(chosen)} saved")


if __name__ == "__main__":
    main()
