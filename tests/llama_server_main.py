"""``python -m llama_cpp.server``, loading the model as skillrt's embedded model would on this CPU.

llama-cpp-python's own server dies on its first request on a CPU with AMX when llama.cpp was
built for it (the repacked weights' AMX kernel faults in ``llama_decode``); the server has no
option for ``use_extra_bufts``. So on such a CPU this launcher loads without extra buffer
types (``skillrt.llm.llama_engine.model_params_for``), then hands over to the server's own
``main``: ``python -m tests.llama_server_main --model ... --port ...``.
"""

from __future__ import annotations

from llama_cpp.server.__main__ import main

from skillrt.llm.llama_engine import model_params_for
from skillrt.llm.llama_modes import cpu_has_amx

if __name__ == "__main__":
    with model_params_for("no-extra-bufts" if cpu_has_amx() else "default"):
        main()
