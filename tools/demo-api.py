"""A tiny local JSON API to record from: python3 tools/demo-api.py [PORT] (default 9000)."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USERS = [{"id": "1", "name": "Ada Lovelace", "email": "ada@example.com"},
         {"id": "2", "name": "Grace Hopper", "email": "grace@example.com"}]

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "demo-api/1.0"
    sys_version = ""
    def send_json(self, status, value):
        body = (json.dumps(value, indent=2) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path == "/users":
            self.send_json(200, USERS)
        elif self.path.startswith("/users/"):
            uid = self.path.split("/")[2]
            user = next((u for u in USERS if u["id"] == uid), None)
            self.send_json(200 if user else 404, user or {"error": "no such user"})
        else:
            self.send_json(404, {"error": "not found"})
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        data = json.loads(self.rfile.read(length))
        self.send_json(201, {"id": "3", **data})
    def log_message(self, *args): pass

if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9000
    print(f"demo API on http://127.0.0.1:{port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
