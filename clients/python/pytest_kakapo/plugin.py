"""pytest-kakapo: every test its own Kakapo cassette session.

One ``kakapo serve --proxy --cassette-dir ROOT --port 0`` per test run (per xdist worker), started the
first time a test asks for a session and stopped at the end of the run. Each test marked
``@pytest.mark.kakapo`` (or using the ``kakapo`` fixture) opens a session on
``cassettes/<module>/<test name>.json`` beside its file; while it runs, the proxy and CA variables of
the environment point at the session, so any client (a subprocess too) is recorded and replayed.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

MODES = ("none", "new", "all", "once", "passthrough")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
# Variables that would send the plugin's own or the test's traffic elsewhere; cleared while a test runs.
OTHER_PROXY_VARIABLES = ("ALL_PROXY", "all_proxy")
START_TIMEOUT = 60.0
# The longest line of Kakapo's output read while waiting for its port, and how many lines at most.
MAX_LINE = 64 * 1024
MAX_START_LINES = 1000
# An admin answer larger than this is refused (a session summary lists misses and unused recordings).
MAX_ADMIN_ANSWER = 64 * 1024 * 1024

_SESSION_KEY = pytest.StashKey["KakapoSession"]()
_SERVER_KEY = pytest.StashKey["KakapoServer"]()
_UNUSED_PROPERTY = "kakapo_unused"


class KakapoError(Exception):
    """Kakapo could not be found, started or asked for a session."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kakapo", "record and replay HTTP with Kakapo cassette sessions")
    group.addoption(
        "--kakapo-binary",
        default=None,
        metavar="PATH",
        help="the kakapo executable (default: $KAKAPO_BIN, then kakapo on PATH)",
    )
    group.addoption(
        "--kakapo-record",
        default=None,
        metavar="MODE",
        choices=MODES,
        help="record mode of every session: none|new|all|once|passthrough (default: $KAKAPO_RECORD, then once)",
    )
    group.addoption(
        "--kakapo-serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument of kakapo serve (e.g. --kakapo-serve-arg=--upstream-ca --kakapo-serve-arg=ca.pem); repeatable",
    )
    group.addoption(
        "--kakapo-ignore-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a host the clients reach directly, not through Kakapo (NO_PROXY); repeatable",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kakapo(cassette=None, mode=None, strict=True, ignore_hosts=(), match=None): run the test in its own "
        "Kakapo cassette session (cassettes/<module>/<test>.json beside the test file)",
    )
    config.stash[_SERVER_KEY] = KakapoServer(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_SERVER_KEY, None)
    if server is not None:
        server.stop()


def find_binary(config: pytest.Config) -> str:
    """The kakapo executable: --kakapo-binary, then $KAKAPO_BIN, then kakapo on PATH."""
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
    found = shutil.which("kakapo")
    if found:
        return found
    raise KakapoError(
        "pytest-kakapo cannot find the kakapo executable: pass --kakapo-binary PATH, set KAKAPO_BIN, "
        "or put kakapo on PATH"
    )


def record_mode(config: pytest.Config) -> str:
    mode = config.getoption("kakapo_record") or os.environ.get("KAKAPO_RECORD") or "once"
    if mode not in MODES:
        raise KakapoError(f"KAKAPO_RECORD={mode}: the mode is one of {', '.join(MODES)}")
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
        self.ca_bundle = self._make_ca_bundle(binary)
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

    def _make_ca_bundle(self, binary: str) -> str:
        # `kakapo ca path` makes the CA on first use, and two xdist workers doing that at once can see
        # each other's half-made CA: one at a time, through a lock file.
        lock_path = Path(tempfile.gettempdir()) / f"pytest-kakapo-ca-{os.getuid() if hasattr(os, 'getuid') else 0}.lock"
        try:
            with open(lock_path, "a") as lock:
                try:
                    import fcntl

                    fcntl.flock(lock, fcntl.LOCK_EX)
                except ImportError:  # Windows: no lock
                    pass
                done = subprocess.run(
                    [binary, "ca", "path"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
                )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise KakapoError(f"{binary} ca path: {error}") from error
        if done.returncode != 0:
            raise KakapoError(
                f"{binary} ca path failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}"
            )
        kakapo_ca = Path(done.stdout.decode(errors="replace").strip().splitlines()[-1])
        parts = []
        system = ssl.get_default_verify_paths().cafile
        for candidate in (system, "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"):
            if candidate and os.path.isfile(candidate):
                parts.append(Path(candidate).read_bytes())
                break
        else:
            try:
                import certifi  # type: ignore[import-not-found]

                parts.append(Path(certifi.where()).read_bytes())
            except ImportError:
                pass
        parts.append(kakapo_ca.read_bytes())
        assert self._workdir is not None
        bundle = Path(self._workdir) / "ca-bundle.pem"
        bundle.write_bytes(b"\n".join(part.rstrip(b"\n") for part in parts) + b"\n")
        return str(bundle)

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


class KakapoSession:
    """The session of one test: what the ``kakapo`` fixture gives the test."""

    def __init__(self, server: KakapoServer, cassette: Path, answer: Dict[str, Any], ignore_hosts: List[str]) -> None:
        self._server = server
        #: The cassette file of this session.
        self.cassette = cassette
        #: The session's id, as Kakapo knows it.
        self.session_id: str = str(answer["id"])
        #: The proxy URL that names the session (``http://ID:@127.0.0.1:PORT``).
        self.proxy: str = str(answer["proxy"])
        #: Kakapo's own URL, for clients pointed at it directly (send ``headers`` with every request).
        self.url: str = server.url
        #: The header that names the session, for clients pointed at ``url``.
        self.headers: Dict[str, str] = {"X-Kakapo-Session": self.session_id}
        #: The mode Kakapo chose (``once`` becomes ``none`` or ``new``).
        self.mode: str = str(answer.get("mode", ""))
        #: The CA bundle (the system's CAs and Kakapo's) the clients are pointed at.
        self.ca_bundle: str = server.ca_bundle
        self.ignore_hosts = ignore_hosts
        self.summary: Optional[Dict[str, Any]] = None

    def count(self, method: Optional[str] = None, path: str = "/") -> int:
        """How many requests since the test started matched ``method`` (any when None) and ``path``
        (the router's patterns: ``/users/:id``, ``*``, ``**``)."""
        body: Dict[str, Any] = {"path": path}
        if method:
            body["method"] = method.upper()
        answer = self._server.admin("POST", "/__kakapo/requests/count", body)
        count = answer.get("count") if isinstance(answer, dict) else None
        if not isinstance(count, int) or count < 0:
            raise KakapoError(f"kakapo's count answer has no count: {answer!r}")
        return count

    def close(self) -> Dict[str, Any]:
        if self.summary is None:
            answer = self._server.admin("DELETE", f"/__kakapo/sessions/{self.session_id}")
            self.summary = answer if isinstance(answer, dict) else {}
        return self.summary

    def environment(self) -> Dict[str, str]:
        env = {name: self.proxy for name in PROXY_VARIABLES}
        env.update({name: self.ca_bundle for name in CA_VARIABLES})
        env.update({name: ",".join(self.ignore_hosts) for name in NO_PROXY_VARIABLES})
        return env


def _file_safe(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    if len(safe) > 150:  # keeps the name well under a file system's 255 bytes, with the .json
        import hashlib

        safe = safe[:130] + "_" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return safe or "test"


def cassette_path(item: pytest.Item, named: Optional[str]) -> Path:
    folder = Path(str(item.path)).resolve().parent / "cassettes"
    if named:
        return folder / named
    module = Path(str(item.path)).stem
    return folder / _file_safe(module) / (_file_safe(item.name) + ".json")


def _marker_options(item: pytest.Item) -> Dict[str, Any]:
    marker = item.get_closest_marker("kakapo")
    if marker is None:
        return {}
    if marker.args:
        raise KakapoError(f"{item.nodeid}: @pytest.mark.kakapo takes keyword arguments only")
    known = {"cassette", "mode", "strict", "ignore_hosts", "match", "store"}
    unknown = set(marker.kwargs) - known
    if unknown:
        raise KakapoError(
            f"{item.nodeid}: @pytest.mark.kakapo has no argument {', '.join(sorted(unknown))} "
            f"(it takes {', '.join(sorted(known))})"
        )
    return dict(marker.kwargs)


def _miss_report(session: KakapoSession, summary: Dict[str, Any]) -> str:
    misses = summary.get("misses") or []
    cassette = summary.get("cassette") or session.cassette
    lines = [
        f"Kakapo: {len(misses)} request(s) missed cassette {cassette} "
        f"(mode {summary.get('mode', session.mode)}, session {session.session_id}):"
    ]
    for miss in misses[:50]:
        # `line` (Kakapo 41+): the request with its GraphQL operation or JSON-RPC method, and why it missed.
        lines.append(f"  {miss.get('line') or (str(miss.get('method', '?')) + ' ' + str(miss.get('url', '?')))}")
        nearest = miss.get("nearest") or []
        if not nearest:
            lines.append("    no recording is near it")
        for near in nearest[:5]:
            lines.append(f"    nearest: #{near.get('interaction', '?')} {near.get('method', '?')} {near.get('url', '?')}")
            for difference in (near.get("differences") or [])[:10]:
                lines.append(f"      {difference}")
    if len(misses) > 50:
        lines.append(f"  ... and {len(misses) - 50} more")
    lines.append("Record it with --kakapo-record new (or KAKAPO_RECORD=new), or fix the request.")
    return "\n".join(lines)


def _finish(item: pytest.Item, session: KakapoSession) -> Optional[str]:
    """Ends the session; returns the failure report when a strict session missed."""
    summary = session.close()
    unused = summary.get("unused") or []
    if unused:
        text = "\n".join(
            f"  unused: #{u.get('interaction', '?')} {u.get('method', '?')} {u.get('url', '?')}"
            + (f" {u['label']}" if u.get("label") else "")
            for u in unused[:100]
        )
        cassette = summary.get("cassette") or session.cassette
        item.user_properties.append((_UNUSED_PROPERTY, f"{item.nodeid} ({cassette}):\n{text}"))
    if summary.get("misses") and getattr(session, "strict", True):
        return _miss_report(session, summary)
    return None


@pytest.fixture
def kakapo(request: pytest.FixtureRequest) -> Iterator[KakapoSession]:
    """A Kakapo cassette session for this test, with the environment's proxy and CA variables on it."""
    item = request.node
    server: KakapoServer = request.config.stash[_SERVER_KEY]
    problem = None
    options: Dict[str, Any] = {}
    mode = ""
    try:
        options = _marker_options(item)
        server.ensure_started()
        mode = options.get("mode") or record_mode(request.config)
    except KakapoError as error:
        problem = str(error)
    if problem:
        pytest.fail(problem, pytrace=False)
    if mode not in MODES:
        pytest.fail(f"{item.nodeid}: @pytest.mark.kakapo(mode={mode!r}) is not one of {', '.join(MODES)}", pytrace=False)
    cassette = cassette_path(item, options.get("cassette"))
    try:
        relative = cassette.relative_to(server.root)
    except ValueError:
        pytest.fail(f"{item.nodeid}: cassette {cassette} is outside pytest's rootdir {server.root}", pytrace=False)
    if mode == "none" and not cassette.is_file():
        pytest.fail(
            f"{item.nodeid}: mode none replays only, and cassette {cassette} does not exist: record it first "
            f"(--kakapo-record once or KAKAPO_RECORD=once)",
            pytrace=False,
        )
    try:  # Kakapo refuses a cassette in a folder that does not exist
        cassette.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        problem = f"{item.nodeid}: cannot create the cassette folder {cassette.parent}: {error}"
    if problem:
        pytest.fail(problem, pytrace=False)
    strict = bool(options.get("strict", True))
    body: Dict[str, Any] = {"cassette": relative.as_posix(), "mode": mode, "strict": strict}
    if options.get("match"):
        body["match"] = options["match"]
    if options.get("store"):
        body["store"] = options["store"]
    ignore_hosts = list(request.config.getoption("kakapo_ignore_host") or []) + list(options.get("ignore_hosts") or [])
    try:
        answer = server.admin("POST", "/__kakapo/sessions", body)
        server.admin("DELETE", "/__kakapo/requests")  # count() counts this test's requests only
    except KakapoError as error:
        problem = f"{item.nodeid}: {error}"
    if problem:
        pytest.fail(problem, pytrace=False)
    session = KakapoSession(server, cassette, answer, ignore_hosts)
    session.strict = strict  # type: ignore[attr-defined]
    saved = {name: os.environ.get(name) for name in set(session.environment()) | set(OTHER_PROXY_VARIABLES)}
    for name in OTHER_PROXY_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(session.environment())
    item.stash[_SESSION_KEY] = session
    try:
        yield session
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if session.summary is None:  # the test did not run (setup failed): end it all the same
            try:
                session.close()
            except KakapoError:
                pass


@pytest.fixture(autouse=True)
def _kakapo_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("kakapo") is not None:
        request.getfixturevalue("kakapo")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        result = yield
    except BaseException:
        # The test failed on its own, often because of the miss answer (a 404 the code under test
        # raised on): Kakapo's report goes with the failure, in a section of its own.
        session = item.stash.get(_SESSION_KEY, None)
        if session is not None:
            try:
                report = _finish(item, session)
            except KakapoError as error:
                report = str(error)
            if report:
                item.add_report_section("call", "kakapo", report)
        raise
    session = item.stash.get(_SESSION_KEY, None)
    if session is not None:
        try:
            report = _finish(item, session)
        except KakapoError as error:
            pytest.fail(str(error), pytrace=False)
        if report:
            pytest.fail(report, pytrace=False)
    return result


_unused_reports: List[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == _UNUSED_PROPERTY:
            _unused_reports.append(str(value))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if config.getoption("verbose") > 0 and _unused_reports:
        terminalreporter.write_sep("-", "kakapo: recordings never used")
        for text in _unused_reports:
            terminalreporter.write_line(text)
    _unused_reports.clear()
