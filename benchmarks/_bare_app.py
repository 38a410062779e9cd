"""The bare FastAPI endpoint ``bench_serve.serve_rate`` compares ``skillrt serve`` against: the
same path, the same body model shape and a JSON reply, nothing else (no token, no guards, no
task). Its own module, without postponed annotations, so FastAPI sees the body model."""

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

__all__ = ["app"]


class Body(BaseModel):
    params: dict[str, Any] = {}


class Reply(BaseModel):
    content: str
    state: str


app = FastAPI()


@app.post("/v1/skills/Nothing/run")
async def run(body: Body) -> Reply:
    return Reply(content=f"done: {body.params.get('topic')}", state="COMPLETED")
