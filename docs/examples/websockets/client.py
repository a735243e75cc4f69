"""The price feed's client: python docs/examples/websockets/client.py URL [SYMBOL] (default KKP).

It connects offering the subprotocol prices.v1, subscribes to SYMBOL, reads the hello and two ticks,
says bye and waits for the server's close, printing each step with the time since it connected.
"""
import asyncio
import json
import sys
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def main(url, symbol):
    start = time.monotonic()

    def say(what):
        print(f"{(time.monotonic() - start) * 1000:.0f} ms {what}", flush=True)

    async with connect(url, subprotocols=["prices.v1"], proxy=None) as ws:
        say(f"open, subprotocol {ws.subprotocol}")
        try:
            say(f"<- {await ws.recv()}")
            subscribe = json.dumps({"type": "subscribe", "symbol": symbol})
            await ws.send(subscribe)
            say(f"-> {subscribe}")
            for _ in range(2):
                say(f"<- {await ws.recv()}")
            await ws.send(json.dumps({"type": "bye"}))
            await ws.wait_closed()
        except ConnectionClosed:
            pass
        say(f"closed {ws.close_code} {ws.close_reason}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "KKP"))
