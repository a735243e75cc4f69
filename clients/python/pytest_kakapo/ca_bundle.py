"""The CA bundle a session's clients trust: the system's CAs and Kakapo's."""

from __future__ import annotations

import os
import ssl
import subprocess
import tempfile
from pathlib import Path

from .errors import KakapoError


def make_ca_bundle(binary: str, folder: Path) -> str:
    """Writes ``folder/ca-bundle.pem``: the system's CA certificates and Kakapo's CA (made by ``kakapo ca
    path`` on first use), the bundle every client of a session is pointed at; returns its path."""
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
    bundle = folder / "ca-bundle.pem"
    bundle.write_bytes(b"\n".join(part.rstrip(b"\n") for part in parts) + b"\n")
    return str(bundle)
