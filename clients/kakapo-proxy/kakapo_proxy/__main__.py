"""``python -m kakapo_proxy ARGS`` runs ``kakapo ARGS``."""

from __future__ import annotations

import os
import sys

from . import binary_path


def main() -> None:
    binary = binary_path()
    if os.name == "nt":  # no exec there: run it and pass its status on
        import subprocess

        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
