import Foundation

/// Python's `websockets` (in the venv tools/setup.sh --tests makes) as a WebSocket server and client, for what the
/// NIO peers do not do: permessage-deflate (negotiated by default on both sides, with context takeover),
/// and a client that goes through an HTTP proxy over TLS.
public enum PythonWebSocketPeer {
    /// The venv's python.
    public static let python =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/.build/python-venv/bin/python"

    /// Whether the venv has `websockets`. Under CI (`CI=true`, where tools/setup.sh --tests installs it) this is
    /// always true, so a missing install fails the tests that need it instead of skipping them.
    public static let isAvailable =
        ProcessInfo.processInfo.environment["CI"] == "true"
        || (try? KakapoProcess.runBlocking(["-c", "import websockets.asyncio.server"], executable: python)) == 0

    /// A server on a free port (`websocket listening on http://127.0.0.1:PORT`, read with
    /// `waitUntilListening`) that answers every text message with `echo: ` and it, and the text
    /// `count N` with N messages `{"n": i, ...}` (similar, so deflate's context takeover matters), and
    /// answers `bye` by closing first (1000, `done`).
    public static let server = """
        import asyncio, json
        from websockets.asyncio.server import serve
        async def handler(ws):
            async for message in ws:
                if message == "bye":
                    await ws.close(1000, "done")
                    return
                if isinstance(message, str) and message.startswith("count "):
                    for i in range(int(message[6:])):
                        await ws.send(json.dumps({"n": i, "text": "the same words again and again " * 3}))
                    continue
                await ws.send("echo: " + message if isinstance(message, str) else message)
        async def main():
            async with serve(handler, "127.0.0.1", 0, max_size=None) as server:
                port = server.sockets[0].getsockname()[1]
                print(f"websocket listening on http://127.0.0.1:{port}", flush=True)
                await asyncio.Future()
        asyncio.run(main())
        """

    /// A client: `client URL [--proxy URL] [--ca FILE] MESSAGE...` sends each message, waits for one
    /// reply to each (a message `count N` waits for N), prints `reply: ...` lines and the extensions
    /// negotiated (`extensions: permessage-deflate`), then closes with 1000; after `bye` it waits for the
    /// server's close instead and prints `closed: CODE REASON`.
    public static let client = """
        import asyncio, ssl, sys
        from websockets.asyncio.client import connect
        async def main():
            args = sys.argv[1:]
            url, proxy, context = args.pop(0), None, None
            while args and args[0].startswith("--"):
                flag, value = args.pop(0), args.pop(0)
                if flag == "--proxy": proxy = value
                if flag == "--ca": context = ssl.create_default_context(cafile=value)
            options = {"proxy": proxy} if proxy else {"proxy": None}
            if context: options["ssl"] = context
            async with connect(url, max_size=None, open_timeout=10, **options) as ws:
                print("extensions:", ",".join(e.name for e in ws.protocol.extensions), flush=True)
                for message in args:
                    await ws.send(message)
                    if message == "bye":
                        await ws.wait_closed()
                        print("closed:", ws.close_code, ws.close_reason, flush=True)
                        return
                    for _ in range(int(message[6:]) if message.startswith("count ") else 1):
                        print("reply:", await asyncio.wait_for(ws.recv(), 10), flush=True)
                await ws.close(1000, "client done")
        asyncio.run(main())
        """
}
