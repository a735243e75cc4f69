"""pytest-kakapo through pytester: real kakapo processes, a real local API, real clients."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading

import pytest

CLIENTS = '''
import os, subprocess
import httpx, pytest, requests

API = os.environ["API"]

@pytest.mark.kakapo
def test_requests():
    assert requests.get(API + "/users/1", timeout=30).json() == {"path": "/users/1"}

@pytest.mark.kakapo
def test_httpx():
    assert httpx.get(API + "/users/2", timeout=30).json() == {"path": "/users/2"}

def test_curl(kakapo):
    out = subprocess.run(["curl", "-sSf", API + "/users/3"], capture_output=True, check=True).stdout
    assert out == b'{"path": "/users/3"}'
    assert kakapo.count("GET", "/users/:id") == 1
    assert kakapo.session_id and kakapo.proxy.startswith("http://" + kakapo.session_id + ":@127.0.0.1:")
'''


def test_records_requests_httpx_and_curl_then_replays_with_the_api_stopped(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(test_api=CLIENTS)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3)
    assert api.hits == 3
    for name in ("test_requests", "test_httpx", "test_curl"):
        cassette = pytester.path / "cassettes" / "test_api" / f"{name}.json"
        assert cassette.is_file(), cassette
    api.stop()
    replay = pytester.runpytest_subprocess()
    replay.assert_outcomes(passed=3)


def test_a_miss_fails_the_test_with_kakapos_report(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(test_api=CLIENTS)
    pytester.runpytest_subprocess("-k", "requests").assert_outcomes(passed=1, deselected=2)
    api.stop()
    pytester.makepyfile(
        test_api='''
import os, requests, pytest
@pytest.mark.kakapo
def test_requests():
    requests.get(os.environ["API"] + "/users/9", timeout=30)
'''
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)  # a failure, not an error
    result.stdout.fnmatch_lines(
        [
            "*Kakapo: 1 request(s) missed cassette*test_requests.json (mode none*",
            "*GET http://127.0.0.1:*/users/9: path: /users/9 here, /users/1 recorded (interaction 0)",
            "*nearest: #0 GET http://127.0.0.1:*/users/1",
            "*path: /users/9 here, /users/1 recorded*",
        ]
    )


def test_mode_none_with_no_cassette_fails_and_records_nothing(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(test_api=CLIENTS)
    result = pytester.runpytest_subprocess("--kakapo-record", "none", "-k", "requests")
    result.assert_outcomes(errors=1, deselected=2)
    result.stdout.fnmatch_lines(["*mode none replays only, and cassette *test_requests.json does not exist*"])
    assert api.hits == 0
    assert not (pytester.path / "cassettes" / "test_api" / "test_requests.json").exists()


def test_once_records_the_first_time_and_only_replays_after(pytester: pytest.Pytester, api, monkeypatch) -> None:
    pytester.makepyfile(test_api=CLIENTS)
    monkeypatch.setenv("KAKAPO_RECORD", "once")
    pytester.runpytest_subprocess("-k", "requests").assert_outcomes(passed=1, deselected=2)
    assert api.hits == 1
    # the upstream is still up, yet the second run replays and a new request misses
    pytester.runpytest_subprocess("-k", "requests").assert_outcomes(passed=1, deselected=2)
    assert api.hits == 1
    pytester.makepyfile(
        test_api='''
import os, requests, pytest
@pytest.mark.kakapo
def test_requests():
    requests.get(os.environ["API"] + "/users/1", timeout=30)
    requests.get(os.environ["API"] + "/other", timeout=30)
'''
    )
    pytester.runpytest_subprocess().assert_outcomes(failed=1)
    assert api.hits == 1


def test_two_xdist_workers_each_with_its_own_kakapo(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(
        test_many='''
import os, requests, pytest
@pytest.mark.kakapo
@pytest.mark.parametrize("n", range(8))
def test_user(n):
    assert requests.get(os.environ["API"] + f"/users/{n}", timeout=30).json() == {"path": f"/users/{n}"}
'''
    )
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=8)
    files = sorted(p.name for p in (pytester.path / "cassettes" / "test_many").iterdir())
    assert files == [f"test_user_{n}.json" for n in range(8)]
    for n in range(8):
        recorded = json.loads((pytester.path / "cassettes" / "test_many" / f"test_user_{n}.json").read_text())
        assert f"/users/{n}" in json.dumps(recorded)
    api.stop()
    pytester.runpytest_subprocess("-n", "2", "-p", "xdist").assert_outcomes(passed=8)


def test_parametrised_ids_are_file_safe_and_cassette_names_one(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(
        test_names='''
import os, requests, pytest
@pytest.mark.kakapo
@pytest.mark.parametrize("who", ["a/b c", "../x"])
def test_who(who):
    requests.get(os.environ["API"] + "/who", timeout=30)

@pytest.mark.kakapo(cassette="shared/login.json")
def test_named():
    requests.get(os.environ["API"] + "/login", timeout=30)
'''
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=3)
    names = sorted(p.name for p in (pytester.path / "cassettes" / "test_names").iterdir())
    # What had to go from an id (a slash, a space) is made up for by a hash of the whole name.
    assert [re.sub(r"-[0-9a-f]{8}\.json$", "-HASH.json", name) for name in names] == [
        "test_who_.._x-HASH.json",
        "test_who_a_b_c-HASH.json",
    ], names
    assert (pytester.path / "cassettes" / "shared" / "login.json").is_file()


def test_ids_that_differ_only_in_a_backslash_or_slash_record_and_replay_their_own_cassettes(
    pytester: pytest.Pytester, api
) -> None:
    pytester.makepyfile(
        test_paths=r'''
import os, requests, pytest
@pytest.mark.kakapo
@pytest.mark.parametrize("path", ["a\\b", "a/b", "a b", "a_b"])
def test_path(path):
    number = {"a\\b": 1, "a/b": 2, "a b": 3, "a_b": 4}[path]
    assert requests.get(os.environ["API"] + f"/files/{number}", timeout=30).json() == {"path": f"/files/{number}"}
'''
    )
    pytester.runpytest_subprocess("-n", "2", "-p", "xdist").assert_outcomes(passed=4)
    files = sorted((pytester.path / "cassettes" / "test_paths").iterdir())
    assert len(files) == 4, [f.name for f in files]
    assert "test_path_a_b.json" in [f.name for f in files]  # nothing had to go: the name as before
    recorded = sorted(re.search(r"/files/(\d)", f.read_text()).group(1) for f in files)
    assert recorded == ["1", "2", "3", "4"], "each test its own cassette"
    api.stop()
    replay = pytester.runpytest_subprocess("--kakapo-record", "none")
    replay.assert_outcomes(passed=4)
    assert api.hits == 4
    # A cassette 0.1 wrote under the name that dropped the space is pointed at, not silently used.
    spaced = next(f for f in files if "/files/3" in f.read_text())
    text = spaced.read_text()
    for f in files:
        f.unlink()
    (spaced.parent / "test_path_a_b.json").write_text(text)
    missing = pytester.runpytest_subprocess("--kakapo-record", "none", "test_paths.py::test_path[a b]")
    missing.assert_outcomes(errors=1)
    missing.stdout.fnmatch_lines(["*does not exist*pytest-kakapo 0.1 recorded it as test_path_a_b.json: rename that file*"])


def test_an_unknown_mode_stops_the_run_with_one_usage_error(pytester: pytest.Pytester, api, monkeypatch) -> None:
    pytester.makepyfile(test_api=CLIENTS)
    monkeypatch.setenv("KAKAPO_RECORD", "sometimes")
    for arguments in ([], ["-n", "2", "-p", "xdist"]):
        result = pytester.runpytest_subprocess(*arguments)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
        assert result.stderr.str().count("KAKAPO_RECORD=sometimes: not a record mode; it is one of none, new, all") == 1
        assert "passed" not in result.stdout.str() and "error" not in result.stdout.str().lower()
    assert api.hits == 0
    bad_flag = pytester.runpytest_subprocess("--kakapo-record", "sometimes")
    assert bad_flag.ret == pytest.ExitCode.USAGE_ERROR
    bad_flag.stderr.fnmatch_lines(["*--kakapo-record: invalid choice: 'sometimes'*"])


def test_environment_is_set_during_the_test_and_put_back(pytester: pytest.Pytester, api, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://before.invalid:1")
    monkeypatch.setenv("NO_PROXY", "before.invalid")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/before.pem")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    pytester.makepyfile(
        test_env='''
import os, pytest
@pytest.mark.kakapo(ignore_hosts=["db.local"])
def test_inside(kakapo):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        assert os.environ[name] == kakapo.proxy
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE"):
        bundle = open(os.environ[name]).read()
        assert bundle.count("BEGIN CERTIFICATE") >= 2
    assert os.environ["NO_PROXY"] == "cache.local,db.local"

def test_after():
    assert os.environ["HTTP_PROXY"] == "http://before.invalid:1"
    assert os.environ["NO_PROXY"] == "before.invalid"
    assert os.environ["REQUESTS_CA_BUNDLE"] == "/before.pem"
    assert "HTTPS_PROXY" not in os.environ and "SSL_CERT_FILE" not in os.environ
'''
    )
    pytester.runpytest_subprocess("-p", "no:randomly", "--kakapo-ignore-host", "cache.local").assert_outcomes(passed=2)


def test_unused_recordings_are_listed_with_v(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(
        test_api='''
import os, requests, pytest
@pytest.mark.kakapo
def test_requests():
    requests.get(os.environ["API"] + "/a", timeout=30)
    if os.environ.get("SECOND"):
        return
    requests.get(os.environ["API"] + "/b", timeout=30)
'''
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
    os.environ["SECOND"] = "1"
    try:
        quiet = pytester.runpytest_subprocess()
        verbose = pytester.runpytest_subprocess("-v")
    finally:
        del os.environ["SECOND"]
    quiet.assert_outcomes(passed=1)
    assert "never used" not in quiet.stdout.str()
    verbose.stdout.fnmatch_lines(["*kakapo: recordings never used*", "*unused: #1 GET http://127.0.0.1:*/b"])


def test_no_binary_names_all_four_ways(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("KAKAPO_BIN")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    pytester.makepyfile(test_x="import pytest\n@pytest.mark.kakapo\ndef test_x():\n    pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*cannot find the kakapo executable: pass --kakapo-binary PATH, set KAKAPO_BIN, pip install "
            "kakapo-proxy (kakapo-proxy is not installed), or put kakapo on PATH*"
        ]
    )


def test_binary_from_the_kakapo_proxy_wheel(pytester: pytest.Pytester, monkeypatch, kakapo_binary: str, api) -> None:
    """With no KAKAPO_BIN and no kakapo on PATH, the binary the kakapo-proxy wheel installed is used (a
    stand-in kakapo_proxy package here; tools/check-clean-machine.sh installs the real wheel)."""
    stand_in = pytester.mkdir("site") / "kakapo_proxy"
    stand_in.mkdir()
    (stand_in / "__init__.py").write_text(f"def binary_path():\n    return {kakapo_binary!r}\n")
    monkeypatch.setenv("PYTHONPATH", str(stand_in.parent))
    monkeypatch.delenv("KAKAPO_BIN")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    pytester.makepyfile(
        test_x="import os, pytest, requests\n"
        "@pytest.mark.kakapo\n"
        "def test_x():\n"
        "    assert requests.get(os.environ['API'] + '/a', timeout=30).json()['path'] == '/a'\n"
    )
    pytester.runpytest_subprocess("--kakapo-record", "new").assert_outcomes(passed=1)
    assert (pytester.path / "cassettes" / "test_x" / "test_x.json").is_file()
    # A wheel whose script is gone says so, and PATH is still tried after it.
    (stand_in / "__init__.py").write_text("def binary_path():\n    raise FileNotFoundError('no bin/kakapo here')\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*pip install kakapo-proxy (no bin/kakapo here), or put kakapo on PATH*"])


HTTPS_CLIENTS = '''
import os, subprocess
import httpx, pytest, requests

API = os.environ["API"]

@pytest.mark.kakapo
def test_requests():
    assert requests.get(API + "/hello/kea", timeout=30).json() == {"hello": "kea"}

@pytest.mark.kakapo
def test_httpx():
    assert httpx.get(API + "/hello/tui", timeout=30).json() == {"hello": "tui"}

@pytest.mark.kakapo
def test_curl():
    out = subprocess.run(["curl", "-sSf", API + "/hello/weka"], capture_output=True, check=True).stdout
    assert out == b'{"hello":"weka"}'
'''


def test_the_ca_bundle_lets_clients_reach_an_https_upstream_through_kakapo(
    pytester: pytest.Pytester, kakapo_binary: str, tmp_path, monkeypatch
) -> None:
    routes = tmp_path / "upstream.routes.yaml"
    routes.write_text(
        "routes:\n  - method: GET\n    path: /hello/:name\n    response:\n      json: {hello: \"{{params.name}}\"}\n"
    )
    upstream = subprocess.Popen(
        [kakapo_binary, "serve", "--routes", str(routes), "--tls", "--ca-dir", str(tmp_path / "upstream-ca"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert upstream.stdout is not None
        port = 0
        for _ in range(100):
            line = upstream.stdout.readline().decode(errors="replace")
            found = re.search(r"listening on https://127\.0\.0\.1:(\d+)", line)
            if found or not line:
                port = int(found.group(1)) if found else 0
                break
        assert port, "the HTTPS upstream did not start"
        threading.Thread(target=upstream.stdout.read, daemon=True).start()
        monkeypatch.setenv("API", f"https://localhost:{port}")
        pytester.makepyfile(test_tls=HTTPS_CLIENTS)
        upstream_ca = ["--kakapo-serve-arg=--upstream-ca", f"--kakapo-serve-arg={tmp_path / 'upstream-ca' / 'kakapo-ca.pem'}"]
        pytester.runpytest_subprocess(*upstream_ca).assert_outcomes(passed=3)
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
    replay = pytester.runpytest_subprocess(*upstream_ca)
    replay.assert_outcomes(passed=3)
    assert (pytester.path / "cassettes" / "test_tls" / "test_curl.json").is_file()


def test_a_test_that_fails_on_the_miss_answer_shows_the_report_too(pytester: pytest.Pytester, api) -> None:
    pytester.makepyfile(test_api=CLIENTS)
    pytester.runpytest_subprocess("-k", "requests").assert_outcomes(passed=1, deselected=2)
    pytester.makepyfile(
        test_api='''
import os, requests, pytest
@pytest.mark.kakapo
def test_requests():
    requests.get(os.environ["API"] + "/users/9", timeout=30).raise_for_status()
'''
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*HTTPError: 404*",
            "*Captured kakapo call*",
            "*Kakapo: 1 request(s) missed cassette*test_requests.json*",
            "*path: /users/9 here, /users/1 recorded*",
        ]
    )


def test_an_unknown_marker_argument_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="import pytest\n@pytest.mark.kakapo(casette='a.json')\ndef test_x():\n    pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*test_x.py::test_x: @pytest.mark.kakapo has no argument casette (it takes cassette, *"])
