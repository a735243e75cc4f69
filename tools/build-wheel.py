#!/usr/bin/env python3
"""Builds the kakapo-proxy wheel: a Linux ``kakapo`` executable inside a Python wheel, installed by pip
as a script (``bin/kakapo``), with the ``kakapo_proxy`` package of clients/kakapo-proxy beside it.

    tools/build-wheel.py BINARY OUTDIR [--version X.Y.Z] [--allow-swift-runtime]

The platform tag is read from the binary: its architecture (ELF header) and the newest glibc symbol
version it needs (``manylinux_2_35_x86_64`` for glibc 2.35), so pip installs it only where it runs. A binary
that still needs Swift's shared libraries (not built with --static-swift-stdlib) is refused unless
``--allow-swift-runtime`` (the tests use that for the debug build: such a wheel runs only beside its
toolchain). The version defaults to Sources/KakapoHTTP/KakapoVersion.swift's. The same binary and commit
make the same wheel (names sorted, one time: SOURCE_DATE_EPOCH, else the commit's). Prints the wheel's path.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "clients" / "kakapo-proxy"
NAME = "kakapo_proxy"
# e_machine values of the ELF header, and the names wheel tags use for them.
MACHINES = {0x3E: "x86_64", 0xB7: "aarch64"}


class WheelError(Exception):
    pass


def kakapo_version() -> str:
    text = (ROOT / "Sources" / "KakapoHTTP" / "KakapoVersion.swift").read_text()
    found = re.search(r'public static let current = "([0-9][0-9A-Za-z.+-]*)"', text)
    if not found:
        raise WheelError("no version in Sources/KakapoHTTP/KakapoVersion.swift")
    return found.group(1)


def platform_tag(binary: bytes, allow_swift_runtime: bool) -> str:
    """``manylinux_2_MINOR_ARCH`` from an ELF executable's header and its GLIBC_ symbol versions."""
    if binary[:4] != b"\x7fELF" or len(binary) < 20:
        raise WheelError("not an ELF executable (the wheel is for Linux)")
    if binary[4] != 2 or binary[5] != 1:
        raise WheelError("not a 64-bit little-endian ELF executable")
    machine = int.from_bytes(binary[18:20], "little")
    if machine not in MACHINES:
        raise WheelError(f"ELF machine {machine:#x} is neither x86_64 nor aarch64")
    minors = [int(minor) for minor in re.findall(rb"GLIBC_2\.([0-9]{1,3})(?![0-9.])", binary)]
    if not minors:
        raise WheelError("the binary names no GLIBC_2.* symbol version: is it dynamically linked against glibc?")
    if re.search(rb"libswiftCore\.so", binary) and not allow_swift_runtime:
        raise WheelError(
            "the binary needs Swift's shared libraries: build it with --static-swift-stdlib "
            "(or pass --allow-swift-runtime for a wheel that runs only beside its toolchain)"
        )
    # manylinux_2_17 is the oldest tag pip knows by this name; an older glibc need still says 2_17.
    return f"manylinux_2_{max(17, max(minors))}_{MACHINES[machine]}"


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_time() -> tuple:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        try:
            epoch = subprocess.run(
                ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            epoch = str(int(time.time()))
    if not epoch.isdigit() or len(epoch) > 12:
        raise WheelError(f"SOURCE_DATE_EPOCH={epoch} is not a number of seconds")
    # A zip's dates start in 1980.
    return time.gmtime(max(int(epoch), 315532800))[:6]


def metadata(version: str) -> str:
    readme = (SOURCE / "README.md").read_text()
    header = "\n".join(
        [
            "Metadata-Version: 2.1",
            "Name: kakapo-proxy",
            f"Version: {version}",
            "Summary: Kakapo, a record-and-replay HTTP proxy: the kakapo executable, for pip",
            "License: MIT",
            "Requires-Python: >=3.8",
            "Classifier: License :: OSI Approved :: MIT License",
            "Classifier: Operating System :: POSIX :: Linux",
            "Classifier: Topic :: Software Development :: Testing",
            "Description-Content-Type: text/markdown",
        ]
    )
    return header + "\n\n" + readme


def build(binary_path: Path, out: Path, version: str, allow_swift_runtime: bool) -> Path:
    if not re.fullmatch(r"[0-9][0-9A-Za-z.]{0,40}", version):
        raise WheelError(f"version {version} is not a wheel version (digits, letters and dots)")
    binary = binary_path.read_bytes()
    tag = f"py3-none-{platform_tag(binary, allow_swift_runtime)}"
    dist_info = f"{NAME}-{version}.dist-info"
    files = {}
    for module in sorted((SOURCE / NAME).glob("*.py")):
        files[f"{NAME}/{module.name}"] = (module.read_bytes(), 0o644)
    files[f"{NAME}-{version}.data/scripts/kakapo"] = (binary, 0o755)
    files[f"{dist_info}/LICENSE"] = ((ROOT / "LICENSE").read_bytes(), 0o644)
    files[f"{dist_info}/METADATA"] = (metadata(version).encode(), 0o644)
    wheel = f"Wheel-Version: 1.0\nGenerator: kakapo tools/build-wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files[f"{dist_info}/WHEEL"] = (wheel.encode(), 0o644)
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, (data, _) in sorted(files.items()))
    record += f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = (record.encode(), 0o644)

    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{NAME}-{version}-{tag}.whl"
    partial = target.with_name(target.name + ".partial")
    stamp = build_time()
    # The dist-info goes last, as the wheel format asks, RECORD last of all.
    order = sorted(files, key=lambda name: (name.startswith(dist_info), name.endswith("/RECORD"), name))
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in order:
            data, mode = files[name]
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    partial.replace(target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description="Build the kakapo-proxy wheel around a kakapo binary.")
    parser.add_argument("binary", type=Path, help="the kakapo executable (release, --static-swift-stdlib)")
    parser.add_argument("out", type=Path, help="the folder the wheel is written to")
    parser.add_argument("--version", help="the wheel's version (default: KakapoVersion.swift's)")
    parser.add_argument("--allow-swift-runtime", action="store_true", help="accept a binary that needs libswiftCore.so")
    arguments = parser.parse_args()
    try:
        if not arguments.binary.is_file():
            raise WheelError(f"{arguments.binary}: no such file")
        path = build(arguments.binary, arguments.out, arguments.version or kakapo_version(), arguments.allow_swift_runtime)
    except (WheelError, OSError) as error:
        print(f"build-wheel: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
