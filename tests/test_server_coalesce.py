"""A response's head and body leave in one write (``server.coalesce``), on real connections: a
head is held until its body or the loop's next turn, never reordered, never lost at close."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillrt.server.coalesce import Coalescing
from skillrt.testing import FunctionModel
from tests.server_support import TOKEN, LiveServer, StepModel, make_runtime

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"


class Recording(asyncio.Transport):
    """A real transport, its writes noted as they reach it."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.transport.close()


@pytest.fixture
async def pair() -> AsyncIterator[tuple[Coalescing, Recording, asyncio.StreamReader]]:
    """A real TCP connection on 127.0.0.1: the writing side's transport (coalescing, over a
    recording one) and the reading side's stream."""
    loop = asyncio.get_running_loop()
    accepted: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
    accepted = loop.create_future()

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set_result((reader, writer))

    server = await asyncio.start_server(on_client, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    transport: Any = writer.transport
    recording = Recording(transport)
    coalescing = Coalescing(recording, loop)
    peer, peer_writer = await accepted
    try:
        yield coalescing, recording, peer
    finally:
        transport.close()
        peer_writer.close()
        await peer_writer.wait_closed()
        server.close()
        await server.wait_closed()


async def test_a_head_and_its_body_leave_in_one_write(
    pair: tuple[Coalescing, Recording, asyncio.StreamReader],
) -> None:
    coalescing, recording, peer = pair
    coalescing.write(HEAD)
    assert recording.writes == []  # held
    coalescing.write(b"hello")
    assert recording.writes == [HEAD + b"hello"]
    assert await peer.readexactly(len(HEAD) + 5) == HEAD + b"hello"
    await asyncio.sleep(0)  # the held head's flush finds nothing
    assert recording.writes == [HEAD + b"hello"]


async def test_a_head_alone_leaves_at_the_next_turn_and_other_writes_at_once(
    pair: tuple[Coalescing, Recording, asyncio.StreamReader],
) -> None:
    coalescing, recording, peer = pair
    coalescing.write(HEAD)  # a stream's head: its first event comes later
    await asyncio.sleep(0)
    assert recording.writes == [HEAD]
    assert await peer.readexactly(len(HEAD)) == HEAD
    coalescing.write(b"data: 1\n\n")  # not a head: straight through
    assert recording.writes == [HEAD, b"data: 1\n\n"]
    assert await peer.readexactly(9) == b"data: 1\n\n"


async def test_closing_sends_the_held_head_first(
    pair: tuple[Coalescing, Recording, asyncio.StreamReader],
) -> None:
    coalescing, recording, peer = pair
    coalescing.write(HEAD)
    coalescing.close()
    assert recording.writes == [HEAD]
    assert await peer.read() == HEAD  # then the end of the stream


def test_pipelined_requests_get_their_replies_whole_and_in_order(tmp_path: Path) -> None:
    """Three calls sent at once on one connection (uvicorn answers them in turn, each head
    held for its body): three complete replies, in the order asked."""
    live = LiveServer(make_runtime(tmp_path, FunctionModel(StepModel(), chunk_delay=0.0)))
    try:
        requests = b""
        for topic in ("one", "two", "three"):
            body = json.dumps({"params": {"topic": topic, "steps": 1}}).encode()
            requests += (
                b"POST /v1/skills/Steps/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + TOKEN.encode()
                + b"\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
            sock.sendall(requests)
            got = b""
            contents: list[str] = []
            while len(contents) < 3:
                chunk = sock.recv(65536)
                assert chunk, got
                got += chunk
                while b"\r\n\r\n" in got:
                    head, rest = got.split(b"\r\n\r\n", 1)
                    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                    if len(rest) < length:
                        break
                    assert head.startswith(b"HTTP/1.1 200")
                    contents.append(json.loads(rest[:length])["content"])
                    got = rest[length:]
            # The connection writes through a ``Coalescing`` (uvicorn's protocol and cycles).
            [protocol] = live.server.server_state.connections
            assert isinstance(protocol.transport, Coalescing)
        assert [c.split(" ")[0] for c in contents] == ["one", "two", "three"]
    finally:
        live.stop()
