"""The peers of tools/bench-websocket, on Python's websockets (the venv of tools/setup.sh --tests).

  server             a WebSocket server on a free port: prints `websocket listening on http://127.0.0.1:PORT`
                     and answers every message with one of about 100 bytes of JSON.
  client URL COUNT   sends COUNT messages of about 100 bytes of JSON as fast as the connection takes them
                     while reading the COUNT answers, closes with 1000, and prints `elapsed SECONDS` and
                     `extensions NAMES`. The messages are the same on every run, so a replay matches them.

Both sides negotiate permessage-deflate (websockets' default) unless BENCH_DEFLATE=0.
"""
import asyncio
import json
import os
import sys
import time

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

COMPRESSION = None if os.environ.get("BENCH_DEFLATE") == "0" else "deflate"


def message(side, n):
    # About 100 bytes of JSON, different each time, the way a feed's messages are.
    return json.dumps({"side": side, "n": n, "price": 100 + (n * 37) % 1000 / 100, "symbol": "KKP", "note": "tick"})


async def answer(ws):
    n = 0
    async for _ in ws:
        await ws.send(message("server", n))
        n += 1


async def server():
    async with serve(answer, "127.0.0.1", 0, compression=COMPRESSION, max_queue=None) as running:
        port = running.sockets[0].getsockname()[1]
        print(f"websocket listening on http://127.0.0.1:{port}", flush=True)
        await asyncio.Future()


async def client(url, count):
    async with connect(url, compression=COMPRESSION, max_queue=None, open_timeout=30, close_timeout=30) as ws:
        started = time.monotonic()

        async def send_all():
            for n in range(count):
                await ws.send(message("client", n))

        sender = asyncio.create_task(send_all())
        for _ in range(count):
            await asyncio.wait_for(ws.recv(), 60)
        await sender
        elapsed = time.monotonic() - started
        print("extensions", ",".join(e.name for e in ws.protocol.extensions) or "none", flush=True)
        await ws.close(1000, "done")
    print(f"elapsed {elapsed:.3f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        asyncio.run(server())
    else:
        asyncio.run(client(sys.argv[2], int(sys.argv[3])))
