"""The one ``kakapo serve`` process of a test run (of an xdist worker): found, started, asked, stopped."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from .ca_bundle import make_ca_bundle
from .errors import KakapoError

MODES = ("none", "new", "all", "once", "passthrough")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
# Variables that would send the plugin's own or the test's traffic elsewhere; cleared while a test runs.
OTHER_PROXY_VARIABLES = ("ALL_PROXY", "all_proxy")
START_TIMEOUT = 60.0
# The longest line of Kakapo's output read while waiting for its port, and how many lines at most.
MAX_LINE = 64 * 1024
MAX_START_LINES = 1000
# An admin answer larger than this is refused (a session summary lists misses and unused recordings).
MAX_ADMIN_ANSWER = 64 * 1024 * 1024


def find_binary(config: pytest.Config) -> str:
    """The kakapo executable: --kakapo-binary, then $KAKAPO_BIN, then the one the kakapo-proxy wheel
    installed, then kakapo on PATH."""
    def executable(given: str, named: str) -> str:
        path = Path(given).expanduser()
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        if not os.access(path, os.X_OK) or path.is_dir():
            raise KakapoError(f"{named}: no executable file there")
        return str(path)

    option = config.getoption("kakapo_binary")
    if option:
        return executable(option, f"--kakapo-binary {option}")
    env = os.environ.get("KAKAPO_BIN")
    if env:
        return executable(env, f"KAKAPO_BIN={env}")
    wheel_problem = ""
    try:
        import kakapo_proxy  # the kakapo-proxy wheel, which carries the binary
    except ImportError:
        wheel_problem = "kakapo-proxy is not installed"
    else:
        try:
            return kakapo_proxy.binary_path()
        except FileNotFoundError as error:
            wheel_problem = str(error)
    found = shutil.which("kakapo")
    if found:
        return found
    raise KakapoError(
        "pytest-kakapo cannot find the kakapo executable: pass --kakapo-binary PATH, set KAKAPO_BIN, "
        f"pip install kakapo-proxy ({wheel_problem}), or put kakapo on PATH"
    )


def record_mode(config: pytest.Config) -> str:
    mode = config.getoption("kakapo_record") or os.environ.get("KAKAPO_RECORD") or "once"
    if mode not in MODES:
        raise KakapoError(f"KAKAPO_RECORD={mode}: not a record mode; it is one of {', '.join(MODES)}")
    return mode


class KakapoServer:
    """The one Kakapo process of this run (of this xdist worker): started lazily, stopped at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.port = 0
        self.root = Path(str(config.rootpath)).resolve()
        self.ca_bundle = ""
        self._workdir: Optional[str] = None
        self._output: List[str] = []
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ensure_started(self) -> "KakapoServer":
        if self.process is not None:
            if self.process.poll() is None:
                return self
            raise KakapoError(
                f"kakapo (pid {self.process.pid}) exited with status {self.process.returncode} during the "
                f"run; its last output:\n" + "\n".join(self._output[-20:])
            )
        binary = find_binary(self.config)
        self._workdir = tempfile.mkdtemp(prefix="pytest-kakapo-")
        self.ca_bundle = make_ca_bundle(binary, Path(self._workdir))
        command = [binary, "serve", "--proxy", "--cassette-dir", str(self.root), "--port", "0"]
        command += list(self.config.getoption("kakapo_serve_arg") or [])
        env = dict(os.environ)
        for name in PROXY_VARIABLES + OTHER_PROXY_VARIABLES:
            env.pop(name, None)
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            raise KakapoError(f"cannot start {binary}: {error}") from error
        self.port = self._wait_for_port(command)
        # Keep draining its output so the process never blocks on a full pipe; the tail is kept for errors.
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _wait_for_port(self, command: List[str]) -> int:
        assert self.process is not None and self.process.stdout is not None
        found: Dict[str, int] = {}
        stream = self.process.stdout

        def read() -> None:
            for _ in range(MAX_START_LINES):
                line = stream.readline(MAX_LINE)
                if not line:
                    return
                text = line.decode(errors="replace").rstrip()
                self._output.append(text)
                match = re.search(r"listening on https?://127\.0\.0\.1:(\d{1,5})", text)
                if match and 0 < int(match.group(1)) < 65536:
                    found["port"] = int(match.group(1))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        if "port" not in found:
            self.stop()
            raise KakapoError(
                f"{' '.join(command)} did not say which port it listens on within {START_TIMEOUT:.0f} s; "
                f"its output:\n" + "\n".join(self._output[-20:])
            )
        return found["port"]

    def _drain(self) -> None:
        process = self.process
        if process is None or process.stdout is None:
            return
        for line in iter(lambda: process.stdout.readline(MAX_LINE), b""):  # type: ignore[union-attr]
            self._output.append(line.decode(errors="replace").rstrip())
            del self._output[:-200]

    def admin(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """Calls Kakapo's admin API directly (never through a proxy); returns the decoded JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        token = os.environ.get("KAKAPO_ADMIN_TOKEN")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with self._opener.open(request, timeout=60) as answer:
                raw = answer.read(MAX_ADMIN_ANSWER + 1)
        except urllib.error.HTTPError as error:
            detail = error.read(64 * 1024).decode(errors="replace")
            raise KakapoError(f"kakapo answered {error.code} to {method} {path}: {detail.strip()}") from None
        except OSError as error:
            raise KakapoError(f"kakapo at {self.url} did not answer {method} {path}: {error}") from error
        if len(raw) > MAX_ADMIN_ANSWER:
            raise KakapoError(f"kakapo's answer to {method} {path} is larger than {MAX_ADMIN_ANSWER} bytes")
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError as error:
            raise KakapoError(f"kakapo's answer to {method} {path} is not JSON: {error}") from error

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)  # lets it finish requests in flight and save
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if process is not None and process.stdout is not None:
            process.stdout.close()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
