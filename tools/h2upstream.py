"""An HTTP/2-only upstream for the tests of Kakapo's upstreams over HTTP/2 (Tests/KakapoHTTP2Tests/UpstreamHTTP2Tests.swift).

Run with the venv's python once tools/h2upstream.sh has installed `h2`:

  h2upstream.py                      cleartext HTTP/2 with prior knowledge (what `--upstream h2c://` speaks)
  h2upstream.py --tls CERT KEY       TLS offering only h2 by ALPN (what `--upstream https://` negotiates)

It prints `h2 upstream listening on http://127.0.0.1:PORT` (a free port) and a line per request
(`request GET /path te=trailers`) on standard output. Every answer is HTTP/2 by construction, its header names
in lower case as HTTP/2 has them:

  /trailers         200, three body pieces 150 ms apart (no content-length: an answer of unknown length), then
                    the trailers grpc-status: 0 and x-trailer: yes
  /trailers-sized   the same with a content-length (an answer a proxy buffers whole)
  /echo             200 and JSON: the method, path and headers it got (pseudo-headers and te included), and the
                    trailer x-echo: done
  /plain            200 and "plain", no trailers
  /big-trailers     200 and "x", then 3 trailers of 30,000 bytes each (90 KB: more than Kakapo keeps, less
                    than libcurl itself takes)
  /many-trailers    200 and "x", then 300 short trailers
  /huge-trailers    200 and "x", then (0.2 s later, once the head is through) 300 trailers of 1,000 bytes each
                    (300 KB: more than libcurl 7.88 itself takes over HTTP/2, 128 KiB)
  anything else     404 with trailers grpc-status: 5
"""
import asyncio
import json
import ssl
import sys

import h2.config
import h2.connection
import h2.events
import h2.exceptions


class Connection:
    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.requests = {}

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)

    async def run(self):
        self.h2.initiate_connection()
        self.flush()
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                for event in self.h2.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        self.requests[event.stream_id] = event.headers
                    elif isinstance(event, h2.events.DataReceived):
                        self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers = self.requests.pop(event.stream_id, [])
                        asyncio.ensure_future(self.answer(event.stream_id, headers))
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                self.flush()
        except (ConnectionError, h2.exceptions.ProtocolError) as error:
            print(f"connection closed: {error!r}", flush=True)
        finally:
            self.writer.close()

    async def answer(self, stream, headers):
        fields = dict(headers)
        path = fields.get(":path", "")
        print(f"request {fields.get(':method')} {path} te={fields.get('te', '-')}", flush=True)
        route = path.split("?")[0]
        send = self.h2.send_headers
        if route in ("/trailers", "/trailers-sized"):
            pieces = [b"one\n", b"two\n", b"three\n"]
            head = [(":status", "200"), ("content-type", "text/plain"), ("x-upstream", "h2")]
            if route == "/trailers-sized":
                head.append(("content-length", str(sum(len(p) for p in pieces))))
            send(stream, head)
            self.flush()
            for piece in pieces:
                await asyncio.sleep(0.15)
                self.h2.send_data(stream, piece)
                self.flush()
            send(stream, [("grpc-status", "0"), ("x-trailer", "yes")], end_stream=True)
        elif route == "/echo":
            body = json.dumps({"headers": [[n, v] for n, v in headers]}).encode()
            send(stream, [(":status", "200"), ("content-type", "application/json"), ("content-length", str(len(body)))])
            self.h2.send_data(stream, body)
            send(stream, [("x-echo", "done")], end_stream=True)
        elif route == "/plain":
            send(stream, [(":status", "200"), ("content-type", "text/plain"), ("content-length", "6")])
            self.h2.send_data(stream, b"plain\n", end_stream=True)
        elif route == "/big-trailers":
            send(stream, [(":status", "200"), ("content-type", "text/plain"), ("content-length", "1")])
            self.h2.send_data(stream, b"x")
            send(stream, [(f"x-big-{i}", "b" * 30000) for i in range(3)], end_stream=True)
        elif route == "/huge-trailers":
            send(stream, [(":status", "200"), ("content-type", "text/plain"), ("content-length", "1")])
            self.h2.send_data(stream, b"x")
            self.flush()
            await asyncio.sleep(0.2)
            send(stream, [(f"x-huge-{i}", "h" * 1000) for i in range(300)], end_stream=True)
        elif route == "/broken-stream":
            # A streamed gRPC answer the upstream resets after its first message.
            send(stream, [(":status", "200"), ("content-type", "application/grpc")])
            self.h2.send_data(stream, b"\x00\x00\x00\x00\x02hi")
            self.flush()
            await asyncio.sleep(0.2)
            self.h2.reset_stream(stream, error_code=2)
        elif route == "/many-trailers":
            send(stream, [(":status", "200"), ("content-type", "text/plain"), ("content-length", "1")])
            self.h2.send_data(stream, b"x")
            send(stream, [(f"x-many-{i}", str(i)) for i in range(300)], end_stream=True)
        else:
            send(stream, [(":status", "404"), ("content-length", "0")])
            send(stream, [("grpc-status", "5")], end_stream=True)
        self.flush()


async def main():
    context = None
    if len(sys.argv) == 4 and sys.argv[1] == "--tls":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[2], sys.argv[3])
        context.set_alpn_protocols(["h2"])

    async def accept(reader, writer):
        await Connection(reader, writer).run()

    server = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    print(f"h2 upstream listening on http://127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
