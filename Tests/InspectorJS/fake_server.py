#!/usr/bin/env python3
"""A stand-in for Kakapo's inspector endpoints (issue 32's contract), for working on the page without the
server: serves Sources/KakapoInspector/Web with the real headers, /__kakapo/events as server-sent events, and
canned /__kakapo/requests/{id}, /save, /cassette, /routes, /store, /health, /sessions answers.

    python3 Tests/InspectorJS/fake_server.py --port 8099 [--rate 50] [--token secret]

--rate N adds N generated requests a second to the feed (to look at a busy list); GET /__fake/emit adds one,
GET /__fake/flood?n=N adds N at once.
Standard library only.
"""

import argparse
import base64
import json
import os
import random
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

WEB = os.path.join(os.path.dirname(__file__), "..", "..", "Sources", "KakapoInspector", "Web")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAKUlEQVR4nGP8z8DwnwEJMDIwMDDBBHAp"
    "AAGYAiQ+AxMDAwNjAQMDAwAm4gMBdcyV2wAAAABJRU5ErkJggg==")


def now():
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def body_of(text=None, raw=None):
    if raw is not None:
        return {"size": len(raw), "kept": len(raw), "truncated": False, "base64": base64.b64encode(raw).decode()}
    if text is None:
        return {"size": 0, "kept": 0, "truncated": False, "text": ""}
    data = text.encode()
    return {"size": len(data), "kept": len(data), "truncated": False, "text": text}


class State:
    def __init__(self, port):
        self.port = port
        self.lock = threading.Condition()
        self.entries = []
        self.details = {}
        self.saved = {}
        self.next_id = 1
        self.seed()

    def add(self, method, target, status, source, response=None, request=None, miss=None, **extra):
        with self.lock:
            entry_id = self.next_id
            self.next_id += 1
            host = f"127.0.0.1:{self.port}"
            url = target if target.startswith("http") else f"http://{host}{target}"
            if target.startswith("http"):
                host = urlsplit(target).netloc
            response = response or {"status": status, "headers": [["Content-Type", "application/json"]],
                                     "body": body_of('{"ok":true}')}
            request = request or {"headers": [["Host", host], ["User-Agent", "curl/7.88.1"], ["Accept", "*/*"]],
                                  "body": body_of()}
            request = {"method": method, "target": target, "url": url, **request}
            entry = {"id": entry_id, "time": now(), "method": method, "url": url, "host": host, "target": target,
                     "status": status, "source": source, "ms": round(random.uniform(0.2, 40), 3),
                     "requestBytes": request["body"]["size"],
                     "responseBytes": (response.get("body") or {}).get("size", 0),
                     "contentType": dict((k.lower(), v) for k, v in response.get("headers", [])).get("content-type"),
                     "stream": "chunks" in response, "webSocket": False, **extra}
            if entry["contentType"] is None:
                del entry["contentType"]
            detail = dict(entry, request=request, response=response)
            live = source in ("upstream", "passthrough")
            detail["canSave"] = live
            if not live:
                detail["cannotSave"] = f"a {source} exchange is not live"
            if miss:
                detail["miss"] = miss
            self.entries.append(entry)
            self.details[entry_id] = detail
            self.lock.notify_all()
            return entry

    def seed(self):
        self.add("GET", "/users/1", 200, "cassette", interaction=0)
        self.add("POST", "/users?x=1", 201, "route", request={
            "headers": [["Content-Type", "application/json"], ["Authorization", "[REDACTED]"]],
            "body": body_of('{"name":"Kea","tags":["a","b"],"nested":{"deep":{"value":12345678901234567890}}}')})
        self.add("GET", "/users/2?page=2", 404, "miss", response={
            "status": 404, "headers": [["Content-Type", "application/json"]],
            "body": body_of('{"error":{"message":"kakapo: no recording matches GET /users/2?page=2: '
                            'query parameter page: 2 here, 1 recorded (interaction 0)","type":"kakapo_miss",'
                            '"code":"kakapo_miss"}}')},
            miss={"cassette": "api.json", "nearest": [
                {"interaction": 0, "method": "GET", "url": f"http://127.0.0.1:{self.port}/users/1?page=1",
                 "differences": ["path: /users/2 here, /users/1 recorded", "query parameter page: 2 here, 1 recorded"],
                 "fields": [{"part": "path", "here": "/users/2", "recorded": "/users/1"},
                            {"part": "query", "name": "page", "here": "2", "recorded": "1"}]},
                {"interaction": 1, "method": "POST", "url": f"http://127.0.0.1:{self.port}/users",
                 "differences": ["method: GET here, POST recorded", "body /name differs"],
                 "fields": [{"part": "method", "here": "GET", "recorded": "POST"},
                            {"part": "body", "pointer": "/name"}]}]})
        self.add("GET", "http://api.example.com/logo.png", 200, "upstream", response={
            "status": 200, "headers": [["Content-Type", "image/png"]], "body": body_of(raw=PNG)})
        self.add("GET", "/events", 200, "cassette", response={
            "status": 200, "headers": [["Content-Type", "text/event-stream"]],
            "chunks": [{"offsetMs": 0, "size": 9, "text": "data: a\n\n"}, {"offsetMs": 250, "size": 9, "text": "data: b\n\n"}]})
        self.add("GET", "/bin", 200, "passthrough", response={
            "status": 200, "headers": [["Content-Type", "application/octet-stream"]],
            "body": body_of(raw=bytes(range(256)) * 2)})
        self.add("DELETE", "/users/9", 500, "error", response=None)
        self.add("GET", "/<script>alert(1)</script>?q=\"'$(id)", 200, "upstream", request={
            "headers": [["X-Evil", "<img src=x onerror=alert(1)>"], ["Cookie", "a='b'; c=$(whoami)"]],
            "body": body_of()})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None
    token = None

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json", headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if not self.token:
            return True
        return self.headers.get("Authorization") == f"Bearer {self.token}"

    def do_GET(self):
        parts = urlsplit(self.path)
        path = parts.path
        query = parse_qs(parts.query)
        if path in ("/__kakapo/ui", "/__kakapo/ui/") or path.startswith("/__kakapo/ui/"):
            name = "index.html" if path in ("/__kakapo/ui", "/__kakapo/ui/") else path[len("/__kakapo/ui/"):]
            file = os.path.join(WEB, name)
            if "/" in name or not os.path.isfile(file):
                return self.send(404, {"error": f"no file {name}"})
            with open(file, "rb") as handle:
                data = handle.read()
            return self.send(200, data, TYPES.get(os.path.splitext(name)[1], "application/octet-stream"), [
                ("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-cache")])
        if path == "/__fake/flood":
            # Many entries at once (no details): how the page copes with a burst, e.g. 10,000 req/s of replay.
            count = min(int((query.get("n") or ["1000"])[0]), 200_000)
            with self.state.lock:
                for _ in range(count):
                    entry_id = self.state.next_id
                    self.state.next_id += 1
                    self.state.entries.append({
                        "id": entry_id, "time": now(), "method": "GET", "url": f"http://127.0.0.1:{self.state.port}/flood/{entry_id}",
                        "host": f"127.0.0.1:{self.state.port}", "target": f"/flood/{entry_id}", "status": 200,
                        "source": "cassette", "ms": 0.2, "requestBytes": 0, "responseBytes": 120,
                        "contentType": "application/json", "interaction": 0, "stream": False, "webSocket": False})
                self.state.lock.notify_all()
            return self.send(200, {"added": count})
        if path == "/__fake/emit":
            entry = self.state.add("GET", f"/emitted/{self.state.next_id}", 200, "upstream")
            return self.send(200, entry)
        if not self.authorized():
            return self.send(401, {"error": "this Kakapo needs its admin token"})
        if path == "/__kakapo/events":
            return self.events(query)
        if path == "/__kakapo/health":
            return self.send(200, {"status": "ok", "mode": "replay", "cassette": "api.json", "version": "fake"})
        if path == "/__kakapo/requests":
            return self.send(200, {"counts": {}, "requests": self.state.entries[-1000:]})
        if path.startswith("/__kakapo/requests/"):
            rest = path[len("/__kakapo/requests/"):]
            detail = self.state.details.get(int(rest)) if rest.isdigit() else None
            if detail is None:
                return self.send(404, {"error": "no longer held"})
            detail = dict(detail)
            if detail["id"] in self.state.saved:
                detail["saved"] = self.state.saved[detail["id"]]
            return self.send(200, detail)
        if path == "/__kakapo/cassette":
            return self.send(200, {"cassette": "api.json", "mode": "none", "maxAge": "30d", "interactions": [
                {"interaction": 0, "method": "GET", "url": f"http://127.0.0.1:{self.state.port}/users/1?page=1",
                 "status": 200, "recordedAt": "2026-10-01T10:00:00.000Z", "used": True, "stale": True,
                 "kind": "http", "responseBytes": 24},
                {"interaction": 1, "method": "POST", "url": f"http://127.0.0.1:{self.state.port}/users",
                 "status": 201, "recordedAt": "2026-11-20T10:00:00.000Z", "used": False, "stale": False,
                 "kind": "http", "responseBytes": 30}]})
        if path.startswith("/__kakapo/cassette/"):
            n = path[len("/__kakapo/cassette/"):]
            if n == "0":
                return self.send(200, {"interaction": 0, "recordedAt": "2026-10-01T10:00:00.000Z", "used": True,
                                       "stale": True, "request": {
                                           "method": "GET", "target": "/users/1?page=1",
                                           "url": f"http://127.0.0.1:{self.state.port}/users/1?page=1",
                                           "headers": [["Host", f"127.0.0.1:{self.state.port}"], ["Accept", "*/*"]],
                                           "body": body_of()},
                                       "response": {"status": 200, "headers": [["Content-Type", "application/json"]],
                                                    "body": body_of('{"id":1,"name":"Kea"}')}})
            if n == "1":
                return self.send(200, {"interaction": 1, "recordedAt": "2026-11-20T10:00:00.000Z", "used": False,
                                       "stale": False, "request": {
                                           "method": "POST", "target": "/users",
                                           "url": f"http://127.0.0.1:{self.state.port}/users",
                                           "headers": [["Content-Type", "application/json"]],
                                           "body": body_of('{"name":"Ruru","age":3}')},
                                       "response": {"status": 201, "headers": [], "body": body_of('{"id":2}')}})
            return self.send(404, {"error": "no interaction " + n})
        if path == "/__kakapo/routes":
            return self.send(200, {"routes": [{"id": "users", "origin": "file", "route": {
                "method": "POST", "path": "/users", "response": {"status": 201}}}], "resources": []})
        if path == "/__kakapo/store":
            return self.send(200, {"stores": [{"users": [{"id": 1, "name": "Kea"}]}]})
        if path == "/__kakapo/sessions":
            return self.send(404, {"error": "sessions are not enabled"})
        return self.send(404, {"error": f"no admin endpoint GET {path}"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if not self.authorized():
            return self.send(401, {"error": "this Kakapo needs its admin token"})
        path = urlsplit(self.path).path
        if path.startswith("/__kakapo/requests/") and path.endswith("/save"):
            rest = path[len("/__kakapo/requests/"):-len("/save")]
            detail = self.state.details.get(int(rest)) if rest.isdigit() else None
            if detail is None:
                return self.send(404, {"error": "no longer held"})
            if not detail["canSave"]:
                return self.send(409, {"error": detail["cannotSave"]})
            if detail["id"] in self.state.saved:
                return self.send(409, {"error": "saved before"})
            saved = {"cassette": "api.json", "interaction": 2 + len(self.state.saved)}
            self.state.saved[detail["id"]] = saved
            return self.send(201, saved)
        return self.send(404, {"error": "no such endpoint"})

    def events(self, query):
        after = self.headers.get("Last-Event-ID") or (query.get("after") or [None])[0]
        after = int(after) if after and after.isdigit() else 0
        if (query.get("backlog") or [""])[0] == "none":
            after = self.state.next_id - 1
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            while True:
                with self.state.lock:
                    fresh = [e for e in self.state.entries if e["id"] > after]
                    if not fresh:
                        self.state.lock.wait(15)
                        fresh = [e for e in self.state.entries if e["id"] > after]
                if not fresh:
                    self.wfile.write(b": keep-alive\n\n")
                for entry in fresh:
                    self.wfile.write(f"id: {entry['id']}\nevent: request\ndata: {json.dumps(entry)}\n\n".encode())
                    after = entry["id"]
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--token")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    Handler.state = State(server.server_address[1])
    Handler.token = args.token
    print(f"http://127.0.0.1:{server.server_address[1]}/__kakapo/ui", flush=True)
    if args.rate > 0:
        def tick():
            methods = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
            sources = ["cassette", "cassette", "route", "store", "upstream", "miss"]
            while True:
                time.sleep(1 / args.rate)
                source = random.choice(sources)
                status = 404 if source == "miss" else random.choice([200, 200, 201, 304, 500])
                Handler.state.add(random.choice(methods), f"/items/{random.randint(1, 999)}?q={random.randint(1, 9)}",
                                  status, source)
        threading.Thread(target=tick, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
