"""A small WebSocket price feed to record from: python docs/examples/websockets/server.py [PORT] (default 9101).

It speaks the subprotocol prices.v1, says hello, answers {"type": "subscribe", "symbol": S} with two
ticks 200 ms apart, and answers {"type": "bye"} by closing (1000, "see you"). Needs the `websockets`
package (in the test venv).
"""
import asyncio
import json
import sys

from websockets.asyncio.server import serve


async def handler(ws):
    await ws.send(json.dumps({"type": "hello", "server": "prices"}))
    async for message in ws:
        request = json.loads(message)
        if request.get("type") == "subscribe":
            for price in (101.5, 101.7):
                await asyncio.sleep(0.2)
                await ws.send(json.dumps({"type": "tick", "symbol": request["symbol"], "price": price}))
        elif request.get("type") == "bye":
            await ws.close(1000, "see you")
            return


async def main(port):
    async with serve(handler, "127.0.0.1", port, subprotocols=["prices.v1"]):
        print(f"price feed on ws://127.0.0.1:{port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9101))
    except KeyboardInterrupt:  # Ctrl-C
        pass
