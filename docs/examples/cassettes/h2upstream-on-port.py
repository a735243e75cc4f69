"""tools/h2upstream.py (a cleartext HTTP/2 upstream with trailers) on a port of your choice, for docs/cassettes.md:

    python docs/examples/cassettes/h2upstream-on-port.py 50051

It needs the `h2` library (tools/h2upstream.sh install puts it in .build/python-venv)."""
import asyncio
import runpy
import sys
from pathlib import Path

port = int(sys.argv.pop(1))
start_server = asyncio.start_server


async def on_port(accept, host, _port, **options):
    return await start_server(accept, host, port, **options)


asyncio.start_server = on_port
runpy.run_path(str(Path(__file__).resolve().parents[3] / "tools" / "h2upstream.py"), run_name="__main__")
