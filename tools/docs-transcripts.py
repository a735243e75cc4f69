#!/usr/bin/env python3
"""Runs the transcripts of the README and the guides and says where what they show has drifted from
what the commands print.

A transcript is a fenced block with at least one line starting with "$ ": each such line is a command
(a line ending in a backslash goes on on the next), and the lines after it, up to the next command, are
what it prints. The commands of one file run in order, in one sandbox folder (a copy of cassettes/, and
tools/, Examples/, Tests/, clients/ and docs/ beside it), with `kakapo` the binary given, HOME a folder
of the sandbox shown as /home/me, and the venv of the tests first on PATH:

- `CMD &` starts a job in the background: the lines shown must appear in its output, in order (it may
  print other lines too); when it is given a port, the next command waits until that port answers.
- `kill [-SIG] %N` signals job N and waits for it to end: the lines shown are what it printed since.
- `cd DIR` and `export NAME=VALUE` carry over to the next commands.
- Any other command runs to its end: the lines shown are its output and errors, exactly.

What is compared is normalised: times, HTTP dates, durations, ages, UUIDs, session ids, pids and ports a
process chose are placeholders, and the fixed ports a file uses (8080, 9000, ...) are swapped for free ones while it runs,
so files can run side by side. Log lines (`TIME info kakapo: ...`) not shown are ignored; a shown line
ending in `...` matches any line that starts with what precedes it, and a line `...` alone any number of
lines. An HTML comment before a block opts it out, with a reason:
`<!-- transcript: not run: REASON -->` (a recipe for hardware or hosts this machine does not have), or
`<!-- transcript: checked by PATH -->` (a test file that reads this document and runs the block itself).

    tools/docs-transcripts.py --kakapo .build/debug/kakapo README.md docs/cassettes.md
    tools/docs-transcripts.py --list README.md docs/*.md     # the transcripts and how each is covered

Exit 0 when every transcript ran as shown; 1 with each drift named by file and line.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
SHOWN_HOME = "/home/me"
# Guards against a hang only: a command, a job's shown lines, a job's end after a signal.
COMMAND_TIMEOUT = 180.0
MARKER = re.compile(r"<!--\s*transcript:\s*(not run|checked by)\s*:?\s*(.*?)\s*-->")
PORT_PLACES = [
    re.compile(r"(?<![\d.])(?:127\.0\.0\.1|localhost):(\d{4,5})\b"),
    re.compile(r"--port[ =](\d{4,5})\b"),
    re.compile(r"\.py (\d{4,5})\b"),
]
VERBOSE = bool(os.environ.get("KAKAPO_DOCS_VERBOSE"))
LOG_LINE = re.compile(r"^(?:\^C)?(?:<time> )?(?:trace|debug|info|notice|warning|error|critical) kakapo: ")


@dataclass
class Step:
    line: int
    command: str
    shown: List[str]


@dataclass
class Transcript:
    file: str
    line: int
    steps: List[Step]
    marker: Optional[Tuple[str, str]] = None


def transcripts(path: Path) -> List[Transcript]:
    """The transcripts of the Markdown file at `path`, with the marker before each, if any."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found: List[Transcript] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith("```"):
            index += 1
            continue
        start = index
        index += 1
        body: List[str] = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        index += 1
        if not any(line.startswith("$ ") for line in body):
            continue
        marker = None
        for back in range(start - 1, max(start - 4, -1), -1):
            match = MARKER.search(lines[back])
            if match:
                marker = (match.group(1), match.group(2))
                break
        steps: List[Step] = []
        number = 0
        while number < len(body):
            line = body[number]
            if line.startswith("$ "):
                command = line[2:]
                first = start + 2 + number
                while command.endswith("\\") and number + 1 < len(body):
                    number += 1
                    command = command + "\n" + body[number]  # bash joins the lines
                steps.append(Step(first, command, []))
            elif steps:
                steps[-1].shown.append(line)
            number += 1
        for step in steps:
            while step.shown and step.shown[-1] == "":
                step.shown.pop()
        found.append(Transcript(str(path), start + 1, steps, marker))
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fixed_ports(items: List[Transcript]) -> Dict[str, str]:
    """The fixed ports the commands of a file use, each with a free port to use instead."""
    ports: Dict[str, str] = {}
    for transcript in items:
        for step in transcript.steps:
            for place in PORT_PLACES:
                for match in place.finditer(step.command):
                    if match.group(1) not in ports:
                        ports[match.group(1)] = str(free_port())
    return ports


def swap(text: str, mapping: Dict[str, str]) -> str:
    if not mapping:
        return text
    pattern = re.compile(r"(?<![\d.])(" + "|".join(map(re.escape, mapping)) + r")(?!\d)")
    return pattern.sub(lambda match: mapping[match.group(1)], text)


def normalise(line: str, ports: Dict[str, str], sandbox: str) -> str:
    line = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line)  # a terminal's bold and colours: what it shows is the text
    line = line.rstrip("\r").split("\r")[-1]  # a line written over (a progress line): what stays is the last
    line = line.rstrip().replace(sandbox + "/home", SHOWN_HOME).replace(sandbox, "/tmp/demo")
    line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?", "<time>", line)
    line = re.sub(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT", "<date>", line)
    line = re.sub(r"\s*\b\d+(?:\.\d+)? ?(?:ms|s)\b", " <duration>", line)  # a column's padding too
    line = re.sub(r"\((?:under a minute|\d+ (?:minutes?|hours?|days?)) old\)", "(<age>)", line)
    line = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>", line)
    line = re.sub(r"\b(process|pid) \d+", r"\1 <pid>", line)
    line = re.sub(r"\bsession [0-9a-f]{16}\b", "session <id>", line)
    return re.sub(
        r"((?:127\.0\.0\.1|localhost):)(\d+)", lambda m: m.group(0) if m.group(2) in ports else m.group(1) + "<port>", line
    )


def split_logs(lines: List[str]) -> Tuple[List[str], List[str]]:
    rest, logs = [], []
    for line in lines:
        (logs if LOG_LINE.match(line) else rest).append(line)
    return rest, logs


def line_matches(shown: str, actual: str) -> bool:
    if shown.endswith("...") and shown != "...":
        return actual.startswith(shown[:-3])
    return shown == actual


def sequence_matches(shown: List[str], actual: List[str], prefix: bool = False) -> bool:
    """Whether `actual` is `shown` (`...` lines matching any number of lines); with `prefix`, whether it
    starts with it."""
    if not shown:
        return prefix or not actual
    if shown[0] == "...":
        return any(sequence_matches(shown[1:], actual[skip:], prefix) for skip in range(len(actual) + 1))
    return bool(actual) and line_matches(shown[0], actual[0]) and sequence_matches(shown[1:], actual[1:], prefix)


def compare(shown: List[str], actual: List[str], ports: Dict[str, str], sandbox: str, prefix: bool = False) -> bool:
    back = {new: old for old, new in ports.items()}
    while actual and not actual[-1].strip():  # as the blank lines ending what a document shows
        actual = actual[:-1]
    shown_rest, shown_logs = split_logs([normalise(line, ports, sandbox) for line in shown])
    actual_rest, actual_logs = split_logs([normalise(swap(line, back), ports, sandbox) for line in actual])
    if not sequence_matches(shown_rest, actual_rest, prefix):
        return False
    return all(any(line_matches(log, other) for other in actual_logs) for log in shown_logs)


def run_in_terminal(command: str, cwd: str, env: Dict[str, str]) -> Tuple[Optional[int], List[str]]:
    """Runs `command` with a terminal as its output and errors, as a person running it sees it (curl shows
    no progress meter there, for one); its status (None when it did not end in time) and lines."""
    main_side, terminal = pty.openpty()
    process = subprocess.Popen(
        ["bash", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    chunks: List[bytes] = []
    deadline = time.monotonic() + COMMAND_TIMEOUT
    while True:
        ready, _, _ = select.select([main_side], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main_side, 65536)
            except OSError:  # the terminal's other side is closed: every writer is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif time.monotonic() > deadline:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
            os.close(main_side)
            return None, []
    os.close(main_side)
    status = process.wait()
    lines = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n").split("\n")
    while lines and lines[-1].strip() == "":  # as the blank lines ending what a document shows
        lines.pop()
    return status, lines


class Job:
    def __init__(self, command: str, cwd: str, env: Dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.lines: List[str] = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in iter(self.process.stdout.readline, b""):
            with self.lock:
                self.lines.append(raw.decode(errors="replace").rstrip("\r\n"))

    def output(self) -> List[str]:
        with self.lock:
            return list(self.lines)

    def stop(self) -> None:
        try:  # the whole group, also when its first process has ended (what a pipeline left)
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()


def wait_for_port(port: int, job: Job) -> None:
    deadline = time.monotonic() + COMMAND_TIMEOUT
    while time.monotonic() < deadline and job.process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)


def sandbox_for(kakapo: str) -> Tuple[str, Dict[str, str]]:
    sandbox = os.path.realpath(tempfile.mkdtemp(prefix="kakapo-docs-"))
    os.chmod(sandbox, 0o755)  # tools run as another user (PostgreSQL's) may look into it
    for name in ("cassettes", "Examples"):  # what the commands may write into
        shutil.copytree(ROOT / name, Path(sandbox) / name)
    for name in ("tools", "Tests", "clients", "docs"):
        os.symlink(ROOT / name, Path(sandbox) / name)
    os.mkdir(Path(sandbox) / "home")
    bin_dir = Path(sandbox) / ".bin"
    bin_dir.mkdir()
    os.symlink(os.path.abspath(kakapo), bin_dir / "kakapo")
    venv = ROOT / ".build" / "python-venv" / "bin"
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy", "KAKAPO_RECORD", "KAKAPO_ADMIN_TOKEN", "KAKAPO_NOW"):
        env.pop(name, None)
    env.update(HOME=str(Path(sandbox) / "home"), PATH=f"{bin_dir}:{venv}:{env.get('PATH', '/usr/bin:/bin')}",
               LC_ALL="C.UTF-8", TERM="dumb", COLUMNS="80", NO_COLOR="1", PYTHONUNBUFFERED="1")
    return sandbox, env


def run_file(path: Path, kakapo: str) -> List[str]:
    """Runs the transcripts of one file; the drifts found, each naming the file and line."""
    items = [item for item in transcripts(path) if item.marker is None]
    if not items:
        return []
    problems: List[str] = []
    ports = fixed_ports(items)
    sandbox, env = sandbox_for(kakapo)
    cwd = sandbox
    last_status = 0
    jobs: Dict[int, Job] = {}  # by the number bash would give them, while they may still run
    started: List[Job] = []  # every job, for the clean-up
    try:
        for item in items:
            for step in item.steps:
                where = f"{path}:{step.line}: $ {step.command.splitlines()[0]}"
                if VERBOSE:
                    print(f"running {where}", file=sys.stderr, flush=True)
                command = swap(step.command, ports)
                stripped = re.sub(r"\s+#[^'\"]*$", "", command).strip()
                actual: List[str]
                kill = re.fullmatch(r"kill(?: -(\w+))? %(\d+)", stripped)
                if stripped.endswith("&") and not stripped.endswith("&&"):
                    job = Job(stripped[:-1].strip(), cwd, env)
                    # As bash numbers jobs: one more than the highest still running.
                    running = [n for n, other in jobs.items() if other.process.poll() is None]
                    jobs[max(running, default=0) + 1] = job
                    started.append(job)
                    deadline = time.monotonic() + COMMAND_TIMEOUT
                    while not compare(step.shown, job.output(), ports, sandbox, prefix=True):
                        if time.monotonic() > deadline or job.process.poll() is not None:
                            time.sleep(0.2)
                            break
                        time.sleep(0.05)
                    actual = job.output()
                    if not compare(step.shown, actual, ports, sandbox, prefix=True):
                        problems.append(drift(where, step.shown, actual, ports, sandbox))
                    given = [int(ports[p]) for place in PORT_PLACES for p in place.findall(step.command) if p in ports]
                    for port in given[-1:]:
                        wait_for_port(port, job)
                    continue
                if kill:
                    number = int(kill.group(2))
                    if number not in jobs:
                        problems.append(f"{where}: there is no job %{number}")
                        continue
                    job = jobs.pop(number)
                    before = len(job.output())
                    name = kill.group(1) or "TERM"
                    sig = int(name) if name.isdigit() else getattr(signal, "SIG" + name.upper().removeprefix("SIG"))
                    if job.process.poll() is None:
                        try:  # as bash does: to the job's whole process group (a pipeline's every process)
                            os.killpg(job.process.pid, sig)
                        except ProcessLookupError:
                            pass
                    try:
                        job.process.wait(timeout=COMMAND_TIMEOUT)
                    except subprocess.TimeoutExpired:
                        problems.append(f"{where}: the job did not end within {COMMAND_TIMEOUT:.0f} s")
                    job.reader.join(timeout=10)
                    actual = job.output()[before:]
                elif re.fullmatch(r"cd \S+", stripped):
                    cwd = os.path.normpath(os.path.join(cwd, stripped[3:]))
                    actual = []
                else:
                    moved = re.fullmatch(r"cd (\S+) && (.+)", command, flags=re.DOTALL)
                    if moved:  # the shell stays in the folder after the command
                        cwd = os.path.normpath(os.path.join(cwd, moved.group(1)))
                        command = moved.group(2)
                    exported = re.fullmatch(r"export (\w+)=(\S*)", stripped)
                    if exported:
                        env[exported.group(1)] = os.path.expandvars(exported.group(2))
                    if stripped == "echo $?":  # the status of the command before
                        actual = [str(last_status)]
                    else:
                        status, actual = run_in_terminal(command, cwd, env)
                        if status is None:
                            problems.append(f"{where}: did not end within {COMMAND_TIMEOUT:.0f} s")
                            continue
                        last_status = status
                if not compare(step.shown, actual, ports, sandbox):
                    problems.append(drift(where, step.shown, actual, ports, sandbox))
    finally:
        for job in started:
            job.stop()
        shutil.rmtree(sandbox, ignore_errors=True)
    return problems


def drift(where: str, shown: List[str], actual: List[str], ports: Dict[str, str], sandbox: str) -> str:
    back = {new: old for old, new in ports.items()}
    printed = [swap(line, back) for line in actual]
    return (
        f"{where}\n  the document shows:\n" + "".join(f"    | {line}\n" for line in shown)
        + "  it printed:\n" + "".join(f"    | {line}\n" for line in printed[:60])
        + (f"    ... {len(printed) - 60} more lines\n" if len(printed) > 60 else "")
        + "  normalised, it printed:\n"
        + "".join(f"    | {normalise(line, ports, sandbox)}\n" for line in printed[:60])
    )


def main() -> int:
    # A process that started this one with signals blocked (a test harness's spawn can) would pass that on
    # to every job: `kill -INT %1` would then do nothing. Jobs get what a shell gives them: none blocked.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kakapo", default=str(ROOT / ".build" / "debug" / "kakapo"), help="the kakapo binary")
    parser.add_argument("--list", action="store_true", help="list the transcripts and how each is covered")
    parser.add_argument("files", nargs="+", type=Path)
    arguments = parser.parse_args()
    if arguments.list:
        for file in arguments.files:
            for item in transcripts(file):
                how = f"{item.marker[0]}: {item.marker[1]}" if item.marker else "run"
                print(f"{item.file}:{item.line}\t{len(item.steps)} commands\t{how}")
        return 0
    if not os.access(arguments.kakapo, os.X_OK):
        print(f"docs-transcripts: --kakapo {arguments.kakapo}: no executable there", file=sys.stderr)
        return 2
    problems: List[str] = []
    for file in arguments.files:
        problems += run_file(file, arguments.kakapo)
    for problem in problems:
        print(problem, file=sys.stderr)
    count = sum(len([t for t in transcripts(f) if t.marker is None]) for f in arguments.files)
    print(f"{count} transcripts run, {len(problems)} drifts")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
