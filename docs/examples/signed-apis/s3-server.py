"""A tiny S3-compatible server that checks AWS SigV4 signatures, Host included, as S3 does:
python3 docs/examples/signed-apis/s3-server.py [PORT] (default 9000). It answers whatever Host it is sent,
like MinIO or moto; PUT /bucket/key keeps the body, GET /bucket/key gives it back. The key pair is
AKIDEXAMPLE / the secret in SECRET below."""
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sigv4 import signature

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
OBJECTS = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "s3-example/1.0"
    sys_version = ""

    def answer(self, status, body, kind="application/xml"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def signed(self):
        found = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^,]+), SignedHeaders=([^,]+), Signature=(\w+)",
                             self.headers.get("Authorization", ""))
        if not found:
            return False
        headers = {name.lower(): value for name, value in self.headers.items()}
        names = found.group(2).split(";")
        if any(name not in headers for name in names):
            return False
        return signature(SECRET, self.command, self.path, headers, names, headers["x-amz-date"]) == found.group(3)

    def refuse(self):
        self.answer(403, b"<Error><Code>SignatureDoesNotMatch</Code></Error>\n")

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.signed():
            return self.refuse()
        OBJECTS[self.path] = body
        self.answer(200, b"")

    def do_GET(self):
        if not self.signed():
            return self.refuse()
        if self.path not in OBJECTS:
            return self.answer(404, b"<Error><Code>NoSuchKey</Code></Error>\n")
        self.answer(200, OBJECTS[self.path], "application/octet-stream")

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9000
    print(f"S3 API on http://127.0.0.1:{port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
