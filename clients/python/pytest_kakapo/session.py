"""One test's cassette session: its cassette's path, what the ``kakapo`` fixture gives the test, and the
report of what it missed."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from .errors import KakapoError
from .server import PROXY_VARIABLES, KakapoServer

CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
# The user property that carries a test's unused recordings to the terminal summary.
UNUSED_PROPERTY = "kakapo_unused"


class KakapoSession:
    """The session of one test: what the ``kakapo`` fixture gives the test."""

    def __init__(
        self, server: KakapoServer, cassette: Path, answer: Dict[str, Any], ignore_hosts: List[str], strict: bool = True
    ) -> None:
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
        #: Whether a miss fails the test.
        self.strict = strict
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


def _underscored(name: str) -> str:
    """`name` with each run of characters other than letters, digits, ``.``, ``_`` and ``-`` made one ``_``,
    and without ``.`` or ``_`` at its ends: pytest-kakapo 0.1's whole file name for a test."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")


def _file_safe(name: str) -> str:
    """A file name for a test's (or module's) name: the name with each run of other characters than
    letters, digits, ``.``, ``_`` and ``-`` made one ``_``. Only a parametrised test's brackets
    (``test_get[1]`` -> ``test_get_1``) are dropped as they are; when anything else had to go (a backslash,
    a slash, a space), a hash of the whole name follows, so ``test_get[a\\b]`` and ``test_get[a/b]`` never
    share a cassette."""
    plain = re.sub(r"\[(.*)\]$", r"_\1", name, flags=re.DOTALL)
    safe = _underscored(plain)
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    if len(safe) > 150:  # keeps the name well under a file system's 255 bytes, with the .json
        return safe[:130] + "_" + digest[:16]
    if safe != plain:
        return (safe or "test") + "-" + digest[:8]
    return safe or "test"


def cassette_path(item: pytest.Item, named: Optional[str]) -> Path:
    folder = Path(str(item.path)).resolve().parent / "cassettes"
    if named:
        return folder / named
    module = Path(str(item.path)).stem
    return folder / _file_safe(module) / (_file_safe(item.name) + ".json")


def renamed_from(cassette: Path, item: pytest.Item) -> Optional[Path]:
    """The file pytest-kakapo 0.1 named this test's cassette, when it is there and the name changed since
    (0.1 dropped a backslash, a slash or a space from an id without a trace, so two tests could share it)."""
    if cassette.name.endswith(".json") and re.search(r"-[0-9a-f]{8}$", cassette.name[: -len(".json")]):
        old = cassette.parent / ((_underscored(item.name) or "test") + ".json")
        if old.is_file():
            return old
    return None


def marker_options(item: pytest.Item) -> Dict[str, Any]:
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


def miss_report(session: KakapoSession, summary: Dict[str, Any]) -> str:
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


def finish(item: pytest.Item, session: KakapoSession) -> Optional[str]:
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
        item.user_properties.append((UNUSED_PROPERTY, f"{item.nodeid} ({cassette}):\n{text}"))
    if summary.get("misses") and session.strict:
        return miss_report(session, summary)
    return None
