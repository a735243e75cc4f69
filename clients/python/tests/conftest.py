"""Shared fixtures of pytest-kakapo's own tests: pytester, a local API on 127.0.0.1 port 0, and the
kakapo binary (KAKAPO_BIN, else the repository's debug build)."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

pytest_plugins = ["pytester"]

REPOSITORY = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def kakapo_binary(monkeypatch: pytest.MonkeyPatch) -> str:
    binary = os.environ.get("KAKAPO_BIN") or str(REPOSITORY / ".build" / "debug" / "kakapo")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"the tests need the kakapo binary: set KAKAPO_BIN (tried {binary}); build it with swift build")
    binary = str(Path(binary).resolve())
    monkeypatch.setenv("KAKAPO_BIN", binary)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "KAKAPO_RECORD"):
        monkeypatch.delenv(name, raising=False)
    return binary


class LocalAPI:
    """A JSON API in a thread: GET answers {"path": ..., "n": how many requests so far}."""

    def __init__(self) -> None:
        api = self
        self.hits = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                api.hits += 1
                body = json.dumps({"path": self.path}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAPI]:
    server = LocalAPI()
    monkeypatch.setenv("API", server.url)
    yield server
    server.stop()
