"""skillrt benchmarks. Run them all with ``python -m benchmarks`` (``--quick`` for a short run).

Needs the ``bench`` extra for the LangGraph comparison and the profiles:
``pip install -e '.[bench]'``. Each ``bench_*`` module exposes functions returning a result
dict (``name``, ``title``, ``params``, ``rows``, ``details``); ``__main__`` runs them, prints
one table and writes JSON (``benchmarks/results.json`` or ``--out``).
"""
