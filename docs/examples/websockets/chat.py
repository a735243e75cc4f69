"""A chat client for scripted conversations:
python docs/examples/websockets/chat.py [--subprotocol NAME] URL MESSAGE...

It prints what the server sends when the connection opens, then sends each message and prints the
answer to it; when the server closes, it prints the close code and reason.
"""
import asyncio
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def main(args):
    subprotocols = None
    if args[0] == "--subprotocol":
        subprotocols = [args[1]]
        args = args[2:]
    url, messages = args[0], args[1:]
    async with connect(url, subprotocols=subprotocols, proxy=None) as ws:
        if ws.subprotocol:
            print(f"subprotocol {ws.subprotocol}")
        try:
            print(f"<- {await ws.recv()}")
            for message in messages:
                await ws.send(message)
                print(f"-> {message}")
                print(f"<- {await ws.recv()}")
            await asyncio.wait_for(ws.recv(), 0.5)  # a close that follows
        except ConnectionClosed:
            print(f"closed {ws.close_code} {ws.close_reason}")
        except asyncio.TimeoutError:
            pass


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
