#!/usr/bin/env python3
"""A smoke test of the inspector in Firefox, through WebDriver BiDi (built into Firefox: no geckodriver):
loads GET /__kakapo/ui of a running Kakapo that has answered at least one request, and checks that the live
feed opens, the rows show, a click opens the detail, "Copy as curl" fills its box, and the console stays clean.

    python3 Tests/InspectorJS/firefox_smoke.py http://127.0.0.1:PORT [screenshot.png]

Needs Debian's firefox-esr and the websocket-client package (selenium's venv has it: .build/python-venv).
Exits 0 when every check held, 1 naming the first that did not, 77 when firefox-esr is not installed.
"""

import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time

try:
    import websocket
except ImportError:
    print("firefox_smoke: no websocket-client (run it with .build/python-venv/bin/python)", file=sys.stderr)
    sys.exit(77)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Firefox:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="kakapo-firefox-")
        port = free_port()
        self.process = subprocess.Popen(
            ["firefox-esr", "--headless", "--no-remote", "--profile", self.profile, "--remote-debugging-port",
             str(port), "--window-size=1400,850"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                # Firefox refuses a WebDriver BiDi connection that sends an Origin it was not told to allow.
                self.socket = websocket.create_connection(f"ws://127.0.0.1:{port}/session", timeout=30,
                                                          suppress_origin=True)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.next_id = 0
        self.logs = []
        self.command("session.new", {"capabilities": {}})
        self.command("session.subscribe", {"events": ["log.entryAdded"]})
        self.context = self.command("browsingContext.getTree", {})["contexts"][0]["context"]

    def command(self, method, params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("method") == "log.entryAdded":
                self.logs.append(message["params"])
            elif message.get("id") == self.next_id:
                if message.get("type") == "error":
                    raise RuntimeError(f"{method}: {message.get('message') or message}")
                return message["result"]

    def evaluate(self, expression):
        result = self.command("script.evaluate", {"expression": expression, "target": {"context": self.context},
                                                  "awaitPromise": True})
        if result.get("type") == "exception":
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def wait(self, what, expression, timeout=8):
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} (waited {timeout} s)")
            time.sleep(0.1)

    def close(self):
        # A parent that blocks SIGTERM (a test runner's thread) passes that on: Firefox then ignores it.
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    if not shutil.which("firefox-esr"):
        print("firefox_smoke: firefox-esr is not installed (apt-get install firefox-esr)", file=sys.stderr)
        return 77
    base = sys.argv[1].rstrip("/")
    browser = Firefox()
    try:
        browser.command("browsingContext.navigate",
                        {"context": browser.context, "url": base + "/__kakapo/ui", "wait": "complete"})
        browser.wait("the live feed did not open",
                     "document.querySelector('[data-testid=connection-status]').textContent === 'live'")
        rows = browser.wait("no row in the list", "document.querySelectorAll('[data-testid=row][data-id]').length")
        ident = browser.evaluate("(() => { const row = document.querySelector('[data-testid=row][data-id]');"
                                 " row.click(); return row.dataset.id; })()")
        browser.wait(f"a click on row {ident} did not open its detail",
                     f"!document.querySelector('[data-testid=detail]').hidden"
                     f" && document.querySelector('[data-testid=detail]').dataset.id === '{ident}'"
                     f" && document.querySelector('[data-testid=copy-curl]') !== null")
        browser.evaluate("document.querySelector('[data-testid=copy-curl]').click()")
        command = browser.wait("Copy as curl left its box empty",
                               "document.querySelector('[data-testid=curl-command]').value")
        if len(sys.argv) > 2:
            shot = browser.command("browsingContext.captureScreenshot", {"context": browser.context})["data"]
            with open(sys.argv[2], "wb") as handle:
                handle.write(base64.b64decode(shot))
        errors = [entry for entry in browser.logs if entry.get("level") == "error"]
        if errors:
            raise AssertionError("the console logged errors: " + "; ".join(e.get("text", "")[:300] for e in errors))
        print(f"firefox_smoke: ok ({rows} rows, detail of {ident}, curl: {command.splitlines()[0][:60]})")
        return 0
    except AssertionError as error:
        print(f"firefox_smoke: {error}", file=sys.stderr)
        return 1
    finally:
        browser.close()


if __name__ == "__main__":
    sys.exit(main())
