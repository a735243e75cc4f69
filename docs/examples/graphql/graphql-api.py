"""A tiny local GraphQL API to record from: python3 docs/examples/graphql/graphql-api.py PORT (docs/graphql.md)."""
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlparse, parse_qs

USERS = {"1": {"id": "1", "name": "Ada Lovelace"}, "2": {"id": "2", "name": "Grace Hopper"}}

class API(BaseHTTPRequestHandler):
    def answer(self, op):
        name, variables = op.get("operationName"), op.get("variables") or {}
        query = op.get("query", "")
        if "users" in query:
            data = {"users": list(USERS.values())}
        elif "createUser" in query:
            data = {"createUser": {"id": "3", "name": variables.get("name")}}
        else:
            data = {"user": USERS.get(str(variables.get("id")))}
        return {"data": data}

    def reply(self, payload):
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        op = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.reply([self.answer(o) for o in op] if isinstance(op, list) else self.answer(op))

    def do_GET(self):
        params = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        params["variables"] = json.loads(params.get("variables", "{}"))
        self.reply(self.answer(params))

    def log_message(self, *args):
        pass

print(f"GraphQL API on http://127.0.0.1:{sys.argv[1]}/graphql", flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), API).serve_forever()
