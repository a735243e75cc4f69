"""pytest-kakapo: every test its own Kakapo cassette session.

One ``kakapo serve --proxy --cassette-dir ROOT --port 0`` per test run (per xdist worker), started the
first time a test asks for a session and stopped at the end of the run. Each test marked
``@pytest.mark.kakapo`` (or using the ``kakapo`` fixture) opens a session on
``cassettes/<module>/<test name>.json`` beside its file; while it runs, the proxy and CA variables of
the environment point at the session, so any client (a subprocess too) is recorded and replayed.

This module holds pytest's hooks and the ``kakapo`` fixture; the Kakapo process is in ``server``, the CA
bundle in ``ca_bundle``, and a test's session (its cassette's name, its miss report) in ``session``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List

import pytest

from .errors import KakapoError
from .server import MODES, OTHER_PROXY_VARIABLES, KakapoServer, record_mode
from .session import UNUSED_PROPERTY, KakapoSession, cassette_path, finish, marker_options, renamed_from

_SESSION_KEY = pytest.StashKey[KakapoSession]()
_SERVER_KEY = pytest.StashKey[KakapoServer]()


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
    try:
        record_mode(config)  # a mode that is none of them stops the run once, before any test
    except KakapoError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[_SERVER_KEY] = KakapoServer(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_SERVER_KEY, None)
    if server is not None:
        server.stop()


@pytest.fixture
def kakapo(request: pytest.FixtureRequest) -> Iterator[KakapoSession]:
    """A Kakapo cassette session for this test, with the environment's proxy and CA variables on it."""
    item = request.node
    server: KakapoServer = request.config.stash[_SERVER_KEY]
    problem = None
    options: Dict[str, Any] = {}
    mode = ""
    try:
        options = marker_options(item)
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
        renamed = None if options.get("cassette") else renamed_from(cassette, item)
        hint = f"; pytest-kakapo 0.1 recorded it as {renamed.name}: rename that file" if renamed else ""
        pytest.fail(
            f"{item.nodeid}: mode none replays only, and cassette {cassette} does not exist: record it first "
            f"(--kakapo-record once or KAKAPO_RECORD=once){hint}",
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
    session = KakapoSession(server, cassette, answer, ignore_hosts, strict)
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
                report = finish(item, session)
            except KakapoError as error:
                report = str(error)
            if report:
                item.add_report_section("call", "kakapo", report)
        raise
    session = item.stash.get(_SESSION_KEY, None)
    if session is not None:
        try:
            report = finish(item, session)
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
        if name == UNUSED_PROPERTY:
            _unused_reports.append(str(value))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if config.getoption("verbose") > 0 and _unused_reports:
        terminalreporter.write_sep("-", "kakapo: recordings never used")
        for text in _unused_reports:
            terminalreporter.write_line(text)
    _unused_reports.clear()
