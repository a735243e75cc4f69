"""The ``kakapo`` executable, shipped inside this wheel.

pip installs the binary as a script (``bin/kakapo`` in a venv, ``~/.local/bin/kakapo`` with ``--user``),
so ``kakapo`` is on PATH wherever the environment's scripts are. ``binary_path()`` finds it from Python
for tools that start it themselves (pytest-kakapo does), and ``python -m kakapo_proxy ARGS`` runs it.
"""

from __future__ import annotations

import os
import sys
import sysconfig

__all__ = ["binary_path"]

_NAME = "kakapo" + (sysconfig.get_config_var("EXE") or "")


def _candidates() -> list:
    """Where pip puts this wheel's script: the environment's scripts folder, the user scheme's (``pip
    install --user``), and ``bin`` beside the package folder (``pip install --target DIR``)."""
    folders = [sysconfig.get_path("scripts")]
    if sys.version_info >= (3, 10):
        user_scheme = sysconfig.get_preferred_scheme("user")
    else:
        user_scheme = "nt_user" if os.name == "nt" else "posix_user"
    try:
        folders.append(sysconfig.get_path("scripts", scheme=user_scheme))
    except KeyError:
        pass
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders.append(os.path.join(package_root, "bin"))
    return [os.path.join(folder, _NAME) for folder in folders if folder]


def binary_path() -> str:
    """The path of the ``kakapo`` executable this wheel installed.

    Raises ``FileNotFoundError`` naming the places it looked when none of them holds it (the wheel was
    installed without its scripts, or the script was removed)."""
    candidates = _candidates()
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        "kakapo-proxy is installed but its kakapo executable is not in any of: " + ", ".join(candidates)
    )
