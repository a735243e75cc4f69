"""A local upstream that streams: python3 docs/examples/streams/upstream.py [PORT] (default 18123).

GET /events        5 server-sent events, 200 ms apart, then the end of the stream
GET /broken        2 events, 200 ms apart, then the connection breaks (no final chunk)
GET /chat          20 events, 300 ms apart (a client usually leaves before the end)
GET /v1/generate   3 JSON lines (application/x-ndjson), 250 ms apart
"""
import json
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The event streams that end: how many events, and the seconds between them.
WHOLE_STREAMS = {"/events": (5, 0.2), "/chat": (20, 0.3)}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "streams-upstream/1.0"
    sys_version = ""

    def start(self, content_type):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def events(self, count, gap):
        for n in range(count):
            if n:
                time.sleep(gap)
            self.chunk(b"id: %d\ndata: token %d\n\n" % (n, n))

    def do_GET(self):
        try:
            if self.path in WHOLE_STREAMS:
                self.start("text/event-stream")
                self.events(*WHOLE_STREAMS[self.path])
                self.wfile.write(b"0\r\n\r\n")
            elif self.path == "/broken":
                self.start("text/event-stream")
                self.events(2, 0.2)
                time.sleep(0.1)
                self.connection.shutdown(socket.SHUT_RDWR)  # the stream breaks off: no final chunk
                self.close_connection = True
            elif self.path == "/v1/generate":
                self.start("application/x-ndjson")
                for n, text in enumerate(["Hel", "lo", "!"]):
                    if n:
                        time.sleep(0.25)
                    self.chunk(json.dumps({"text": text, "n": n}, separators=(",", ":")).encode() + b"\n")
                self.wfile.write(b"0\r\n\r\n")
            else:
                body = b"not found\n"
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client (Kakapo) left
            self.close_connection = True

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18123
    print(f"streams upstream on http://127.0.0.1:{port}", flush=True)
    try:
        ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
    except KeyboardInterrupt:  # Ctrl-C
        pass
