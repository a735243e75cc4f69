"""The driver of tools/bench-inspector (run it through that script, which builds Kakapo and installs what
this needs). What it measures: Kakapo replaying the peers harness's dataset-1 (one 300-byte JSON answer)
under wrk, with nobody following its journal, with `curl -N /__kakapo/events` following it, and with the
real inspector page (/__kakapo/ui in headless Debian chromium, driven through its DevTools protocol)
following it; each at wrk's maximum load (-t2 -c32, as the peers harness's S1) and at a fixed rate (wrk
with tools/bench-inspector-pace.lua keeping to it). The variants are interleaved (none, curl, page, none,
...) over the rounds so that the machine's other load falls on all of them alike.

  bench-inspector.py run --kakapo BIN --dataset FILE --out DIR [--rounds 3] [--duration 10] [--rate 10000]
                         [--warmup 3] [--variants none,curl,page[,page-patched]] [--perf] [--keep-work]
                         [--page-override NAME=FILE ...]
  bench-inspector.py page URL [--override NAME=FILE ...]
                       the follower: opens URL in headless chromium, prints `ready` once the page's feed is
                       live, then answers each `state` line on stdin with a JSON line of what the page shows
                       (counts, notes, connection), each `profile SECONDS PATH` line with a summary of the
                       page's JavaScript CPU profile, and quits on `quit` or the end of stdin.

The variant page-patched is the page with some of its files served from elsewhere (--page-override
events.js=/tmp/events.js, DevTools' Fetch interception): a change to Web/ measured against the built-in page
in the same run, without building Kakapo again. --perf adds a round, left out of the tables, with Kakapo
under `perf record` and the page under DevTools' JavaScript profiler (summaries kept beside the results).

CPU is read from /proc: Kakapo's and the follower's as the utime+stime of every process in their session
(each is started in a session of its own, so chromium's helper processes count as the browser's), wrk's
from the rusage of this process's children, and the machine's from /proc/stat; "foreign" CPU is what the
machine used beyond those three, as ../shared/peers/lib/peersbench.py computes it.
"""
import argparse
import base64
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")
HERE = os.path.dirname(os.path.abspath(__file__))
PACE = os.path.join(HERE, "bench-inspector-pace.lua")
PEERS_RE = re.compile(r"PEERS_RESULT (.*)")
CHROMIUM = "/usr/bin/chromium"


def log(*parts):
    print("bench-inspector:", *parts, file=sys.stderr, flush=True)


# /proc ------------------------------------------------------------------------------------------------


def proc_stat(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2:].split()
    # rest[1]=ppid, [2]=pgrp, [3]=session, [11]=utime, [12]=stime
    return {"session": int(rest[3]), "ticks": int(rest[11]) + int(rest[12])}


def session_ticks(session):
    """CPU ticks of every living process of a session (the processes' own times, not their children's)."""
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st["session"] == session:
                total += st["ticks"]
    return total


def process_kind(pid):
    """chromium's process type (renderer, gpu-process, utility: network, ...; browser for the main one) or the
    program's name."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "?"
    name = os.path.basename(argv[0].decode(errors="replace")) if argv and argv[0] else "?"
    if len(argv) <= 2 and b" --" in argv[0]:
        # chromium rewrites its command line into one string (its process title): words, not arguments.
        argv = argv[0].split(b" ")
        name = os.path.basename(argv[0].decode(errors="replace"))
    if "chrom" not in name:
        return name
    kind = "browser"
    for arg in argv[1:]:
        if arg.startswith(b"--type="):
            kind = arg[7:].decode(errors="replace")
        elif arg.startswith(b"--utility-sub-type="):
            sub = arg.split(b"=", 1)[1].decode(errors="replace")
            kind = "utility " + sub.rsplit(".", 1)[-1]
    return "chromium " + kind


def session_ticks_by_kind(session):
    """CPU ticks of the living processes of a session, by `process_kind`."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st["session"] == session:
                kind = process_kind(int(name))
                out[kind] = out.get(kind, 0) + st["ticks"]
    return out


def busy_ticks():
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values[:8]) - idle


# Processes ---------------------------------------------------------------------------------------------


class Kakapo:
    """`kakapo replay` on a free port, in a session of its own."""

    def __init__(self, binary, cassette, work):
        self.out = open(os.path.join(work, "kakapo.out"), "w+")
        self.err = open(os.path.join(work, "kakapo.err"), "w")
        self.proc = subprocess.Popen([binary, "replay", "--cassette", cassette, "--port", "0"],
                                     stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.port = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.out.seek(0)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.out.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if not self.port:
            self.stop()
            raise RuntimeError("kakapo did not start: see %s" % self.err.name)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def ticks(self):
        return session_ticks(self.proc.pid)

    def stop(self):
        stop_session(self.proc, signal.SIGINT)
        self.out.close()
        self.err.close()


def stop_session(proc, first=signal.SIGTERM):
    """Stops a process started with start_new_session (its group leads with its pid), then KILLs the group."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, first)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class CurlFollower:
    """`curl -N` on the events stream, writing into a file that is counted afterwards (counting while it
    runs would add a parser's CPU to what is meant to be the stream's cost to Kakapo)."""

    name = "curl"

    def __init__(self, kakapo, work):
        self.path = os.path.join(work, "events.txt")
        self.file = open(self.path, "wb")
        self.proc = subprocess.Popen(["curl", "-sN", kakapo.url("/__kakapo/events?backlog=none")],
                                     stdout=self.file, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.marks = [0]
        time.sleep(0.3)
        if self.proc.poll() is not None:
            raise RuntimeError("curl on the events stream ended at once")

    def ticks(self):
        return session_ticks(self.proc.pid)

    def mark(self):
        """Ends a phase: what the file holds from here on belongs to the next one."""
        self.file.flush()
        self.marks.append(os.path.getsize(self.path))
        return {}

    def stop(self):
        stop_session(self.proc)
        self.file.close()

    def phases(self):
        """Per phase (between marks): the events received and the events the stream said it dropped."""
        out = []
        with open(self.path, "rb") as f:
            for start, end in zip(self.marks, self.marks[1:]):
                f.seek(start)
                data = f.read(end - start)
                dropped = sum(int(m) for m in re.findall(rb'^data: \{"dropped":(\d+)', data, re.M))
                out.append({"events": data.count(b"\nevent: request\n") + data.startswith(b"event: request\n"),
                            "dropped": dropped})
        return out


class PageFollower:
    """The inspector page in headless chromium (this file's `page` command, in a session of its own)."""

    name = "page"

    def __init__(self, kakapo, work, overrides=()):
        self.err = open(os.path.join(work, "page.err"), "w")
        argv = [sys.executable, os.path.abspath(__file__), "page", kakapo.url("/__kakapo/ui")]
        for override in overrides:
            argv += ["--override", override]
        self.proc = subprocess.Popen(argv,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     start_new_session=True)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.stop()
            raise RuntimeError("the page did not go live (%r): see %s" % (line, self.err.name))
        self.states = [self.state()]

    def ticks(self):
        return session_ticks(self.proc.pid)

    def ticks_by_kind(self):
        return session_ticks_by_kind(self.proc.pid)

    def start_profile(self, seconds, path):
        """Starts the page's JavaScript CPU profile (DevTools' Profiler) for `seconds`, kept at `path`."""
        self.proc.stdin.write("profile %d %s\n" % (seconds, path))
        self.proc.stdin.flush()

    def profile_result(self):
        """The profile's summary (self time by function), once it is done."""
        line = self.proc.stdout.readline()
        try:
            return json.loads(line)
        except ValueError:
            return {"error": line.strip() or "no answer"}

    def state(self):
        self.proc.stdin.write("state\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        try:
            return json.loads(line)
        except ValueError:
            return {"error": line.strip() or "no answer"}

    def mark(self):
        state = self.state()
        before = self.states[-1]
        self.states.append(state)
        phase = {"roundTripMs": state.get("roundTripMs")}
        for key in ("received", "dropped"):
            if isinstance(state.get(key), int) and isinstance(before.get(key), int):
                phase[key] = state[key] - before[key]
        phase["events"] = phase.pop("received", None)
        phase["counts"] = state.get("counts")
        phase["notes"] = state.get("notes")
        return phase

    def stop(self):
        try:
            if self.proc.poll() is None:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            pass
        stop_session(self.proc)
        self.err.close()

    def phases(self):
        return None


# Load ---------------------------------------------------------------------------------------------------


def run_wrk(url, duration, rate, kakapo, follower):
    argv = ["wrk", "-t2", "-c32", "-d%ds" % duration, "--timeout", "2s", "-s", PACE, url]
    if rate:
        argv += ["--", str(rate), "2"]
    k0 = kakapo.ticks()
    f0 = follower.ticks() if follower else 0
    kinds0 = follower.ticks_by_kind() if hasattr(follower, "ticks_by_kind") else None
    b0 = busy_ticks()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b1 = busy_ticks()
    k1 = kakapo.ticks()
    f1 = follower.ticks() if follower else 0
    kinds1 = follower.ticks_by_kind() if kinds0 is not None else None
    m = PEERS_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("wrk failed (%s): %s %s" % (p.returncode, p.stdout[-500:], p.stderr[-500:]))
    kv = dict(x.split("=") for x in m.group(1).split())
    n = int(kv["requests"])
    seconds = int(kv["duration_us"]) / 1e6
    kakapo_cpu = (k1 - k0) / CLK_TCK
    follower_cpu = (f1 - f0) / CLK_TCK
    wrk_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    busy = (b1 - b0) / CLK_TCK
    return {
        "cmd": " ".join(argv), "requests": n, "rps": n / seconds if seconds else 0.0,
        "p50_ms": int(kv["p50_us"]) / 1000, "p99_ms": int(kv["p99_us"]) / 1000,
        "errors": sum(int(kv[k]) for k in ("err_connect", "err_read", "err_write", "err_timeout")),
        "non2xx": int(kv["err_status"]),
        "kakapo_cpu_s": kakapo_cpu, "kakapo_us_per_req": kakapo_cpu * 1e6 / n if n else None,
        "kakapo_cpu_pct": kakapo_cpu / wall * 100,
        "follower_cpu_pct": follower_cpu / wall * 100 if follower else None,
        "wrk_cpu_pct": wrk_cpu / wall * 100,
        "foreign_cpu_pct": max(0.0, (busy - kakapo_cpu - follower_cpu - wrk_cpu) / wall * 100),
        "wall_s": wall,
        "follower_cpu_pct_by_process": {
            kind: (kinds1[kind] - kinds0.get(kind, 0)) / CLK_TCK / wall * 100 for kind in kinds1
        } if kinds1 else None,
    }


def settle(follower, limit_s=15.0):
    """Waits until the follower has worked through what the last phase sent it (it uses less than 10 % of a
    core), at most limit_s; returns the seconds it took, so the next phase does not pay for the last one."""
    if follower is None:
        time.sleep(1)
        return 0.0
    t0 = time.monotonic()
    last = follower.ticks()
    while time.monotonic() - t0 < limit_s:
        time.sleep(0.5)
        now = follower.ticks()
        if (now - last) / CLK_TCK < 0.05:
            break
        last = now
    return time.monotonic() - t0


def perf_profile(kakapo, seconds, out_dir, label):
    """perf record of Kakapo (where its CPU goes, flat) while a load runs; returns the Popen to wait for."""
    data = os.path.join(out_dir, "perf-%s.data" % label)
    return subprocess.Popen(["perf", "record", "-F", "999", "-p", str(kakapo.proc.pid), "-o", data, "--",
                             "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def measure(args, variant, round_no, cassette, out_dir, profile=False):
    work = tempfile.mkdtemp(prefix="%s-%d-" % (variant, round_no), dir=out_dir)
    kakapo = Kakapo(args.kakapo, cassette, work)
    follower = None
    result = {"variant": variant, "round": round_no}
    try:
        target = kakapo.url("/users/1")
        if variant == "curl":
            follower = CurlFollower(kakapo, work)
        elif variant == "page":
            follower = PageFollower(kakapo, work)
        elif variant == "page-patched":
            follower = PageFollower(kakapo, work, args.page_override)
        # Warm-up: Kakapo's caches and the follower's steady state (the page's list fills and starts trimming).
        run_wrk(target, args.warmup, None, kakapo, follower)
        if follower:
            follower.mark()
        result["settle_after_warmup_s"] = settle(follower)
        for load, rate in (("max", None), ("rate", args.rate)):
            label = "%s-%s" % (variant, load)
            recorder = perf_profile(kakapo, args.duration, out_dir, label) if profile else None
            if profile and variant.startswith("page"):
                follower.start_profile(args.duration, os.path.join(out_dir, "%s.cpuprofile" % label))
            run = run_wrk(target, args.duration, rate, kakapo, follower)
            if recorder:
                recorder.wait(timeout=60)
            if profile and variant.startswith("page"):
                with open(os.path.join(out_dir, "%s-profile.txt" % label), "w") as f:
                    summary = follower.profile_result()
                    f.write(summary.get("text", json.dumps(summary)) + "\n")
                    f.write("\nbrowser CPU by process, %% of one core: %s\n" % json.dumps(
                        run["follower_cpu_pct_by_process"], sort_keys=True))
            time.sleep(0.5)  # the stream's last batch (sent every 50 ms) reaches the follower
            run["settle_s"] = settle(follower)
            if follower:
                run["follower"] = follower.mark()
            result[load] = run
            log("%s %d %-4s %-4s %8.0f req/s, kakapo %5.1f µs/req, follower %s %% CPU, foreign %.0f %%" % (
                "profile" if profile else "round", round_no + 1, variant, load, run["rps"], run["kakapo_us_per_req"] or 0,
                "-" if run["follower_cpu_pct"] is None else "%.0f" % run["follower_cpu_pct"], run["foreign_cpu_pct"]))
    finally:
        if follower:
            follower.stop()
            phases = follower.phases()
            if phases:
                # phases[0] is the warm-up; then max, rate
                for load, phase in zip(("max", "rate"), phases[1:]):
                    if load in result:
                        result[load]["follower"] = phase
        kakapo.stop()
        if not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    return result


# Report -------------------------------------------------------------------------------------------------


def cell(values, digits=0):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    fmt = "%%.%df" % digits
    med = statistics.median(values)
    if len(values) == 1:
        return fmt % med
    return "%s (%s–%s)" % (fmt % med, fmt % min(values), fmt % max(values))


def report(runs, args):
    lines = []
    variants = [v for v in args.variants if any(r["variant"] == v for r in runs)]
    titles = {"none": "nobody", "curl": "curl -N /__kakapo/events", "page": "inspector page (headless chromium)",
              "page-patched": "inspector page with %s" % ", ".join(
                  "%s from %s" % tuple(o.split("=", 1)) for o in args.page_override)}
    for load, title in (("max", "maximum load: wrk -t2 -c32 -d%ds" % args.duration),
                        ("rate", "fixed rate: wrk -t2 -c32 -d%ds, paced to %d req/s" % (args.duration, args.rate))):
        lines.append("### %s" % title)
        lines.append("")
        lines.append("| following | req/s | × nobody | Kakapo CPU µs/req | Kakapo CPU % | p50 ms | p99 ms | follower CPU % "
                     "| events got | events dropped | page round trip ms | foreign CPU % |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for variant in variants:
            rs = [r for r in runs if r["variant"] == variant and load in r]
            ratios = []
            for r in rs:
                base = [b for b in runs if b["variant"] == "none" and b["round"] == r["round"] and load in b]
                if base and base[0][load]["rps"]:
                    ratios.append(r[load]["rps"] / base[0][load]["rps"])
            fol = [r[load].get("follower") or {} for r in rs]
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                titles.get(variant, variant),
                cell([r[load]["rps"] for r in rs]),
                cell(ratios, 3) if variant != "none" else "1",
                cell([r[load]["kakapo_us_per_req"] for r in rs], 1),
                cell([r[load]["kakapo_cpu_pct"] for r in rs]),
                cell([r[load]["p50_ms"] for r in rs], 2),
                cell([r[load]["p99_ms"] for r in rs], 1),
                cell([r[load]["follower_cpu_pct"] for r in rs]),
                cell([f.get("events") for f in fol]) if variant != "none" else "–",
                cell([f.get("dropped") for f in fol]) if variant != "none" else "–",
                cell([f.get("roundTripMs") for f in fol], 1) if variant.startswith("page") else "–",
                cell([r[load]["foreign_cpu_pct"] for r in rs]),
            ))
        lines.append("")
    lines.append("Cells: median (min–max) over %d interleaved rounds; × nobody is the ratio to the same round's "
                 "run with nobody following. Kakapo replays dataset-1 (GET /users/1, 300-byte JSON). "
                 "follower CPU %% is curl's, or the browser's (every chromium process) in %% "
                 "of one core; events got/dropped are per %d s run (the page: entries its list took in and the "
                 "`dropped` counts the stream told it); page round trip is a script run in the page after the run "
                 "(how long its main thread kept a caller waiting). foreign CPU %% is what other programs used "
                 "meanwhile, in %% of one core (2 cores: 200 %%)." % (args.rounds, args.duration))
    return "\n".join(lines)


def run(args):
    os.makedirs(args.out, exist_ok=True)
    cassette = os.path.join(args.out, "cassette.json")
    subprocess.run([sys.executable, os.path.join(HERE, "dataset-to-cassette.py"), args.dataset, cassette], check=True)
    runs = []
    for round_no in range(args.rounds):
        for variant in args.variants:
            runs.append(measure(args, variant, round_no, cassette, args.out))
            with open(os.path.join(args.out, "results.json"), "w") as f:
                json.dump({"args": {k: v for k, v in vars(args).items() if k != "func"}, "runs": runs}, f, indent=1)
    if args.perf:
        # A round of its own, left out of the table: perf's sampling costs Kakapo a little.
        for variant in args.variants:
            measure(args, variant, args.rounds, cassette, args.out, profile=True)
    table = report(runs, args)
    with open(os.path.join(args.out, "inspector.md"), "w") as f:
        f.write(table + "\n")
    if args.perf:
        demangle = ["swift", "demangle", "--simplified"] if shutil.which("swift") else ["cat"]
        for name in sorted(os.listdir(args.out)):
            if name.startswith("perf-") and name.endswith(".data"):
                data = os.path.join(args.out, name)
                parts = []
                for title, sort in (("by thread", "comm"), ("by function, all threads", "dso,sym")):
                    text = subprocess.run(["perf", "report", "-i", data, "--sort", sort, "--percent-limit", "0.3",
                                           "--stdio"], capture_output=True, text=True).stdout
                    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
                    parts.append("## %s\n%s" % (title, "\n".join(lines)))
                readable = subprocess.run(demangle, input="\n\n".join(parts), capture_output=True, text=True).stdout
                with open(data[:-5] + ".txt", "w") as f:
                    f.write(readable + "\n")
    print(table)


# The page follower -------------------------------------------------------------------------------------

PAGE_STATE = """(() => {
  const text = (id) => document.getElementById(id)?.textContent ?? '';
  return [text('counts'), text('notes'), document.getElementById('connection')?.dataset.state ?? ''];
})()"""


class DevTools:
    """Headless chromium driven through its DevTools protocol (a websocket; no chromedriver in between).
    `overrides` maps a file name of the page to a file whose text is served instead (Fetch interception),
    so a change to Web/* can be measured without building Kakapo again."""

    def __init__(self, overrides):
        from websockets.sync.client import connect

        self.profile_dir = tempfile.mkdtemp(prefix="bench-inspector-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
             "--no-first-run", "--disable-extensions", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile_dir, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        browser_url = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                browser_url = m.group(1)
                break
        if not browser_url:
            raise RuntimeError("chromium printed no DevTools address")
        # The rest of chromium's stderr is not read: it goes nowhere rather than filling a pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        http = "http://" + browser_url.split("/")[2]
        with urllib.request.urlopen(http + "/json/list", timeout=10) as answer:
            targets = json.load(answer)
        page_url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        self.ws = connect(page_url, max_size=None, open_timeout=10)
        self.next_id = 0
        self.overrides = overrides
        if overrides:
            self.call("Fetch.enable", {"patterns": [{"urlPattern": "*/__kakapo/ui/" + name} for name in overrides]})

    def call(self, method, params=None):
        self.next_id += 1
        ask = self.next_id
        self.ws.send(json.dumps({"id": ask, "method": method, "params": params or {}}))
        while True:
            message = json.loads(self.ws.recv(timeout=120))
            if message.get("id") == ask:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if message.get("method") == "Fetch.requestPaused":
                self.serve_override(message["params"])

    def serve_override(self, paused):
        name = paused["request"]["url"].split("?")[0].rsplit("/", 1)[-1]
        self.next_id += 1
        with open(self.overrides[name], "rb") as f:
            body = f.read()
        kind = "text/javascript" if name.endswith(".js") else "text/css" if name.endswith(".css") else "text/html"
        self.ws.send(json.dumps({"id": self.next_id, "method": "Fetch.fulfillRequest", "params": {
            "requestId": paused["requestId"], "responseCode": 200,
            "responseHeaders": [{"name": "Content-Type", "value": kind + "; charset=utf-8"}],
            "body": base64.b64encode(body).decode()}}))

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def navigate(self, url):
        self.call("Page.navigate", {"url": url})

    def quit(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile_dir, ignore_errors=True)


def js_profile(browser, seconds, path):
    """Samples the page's JavaScript for `seconds` (1 ms), keeps the profile at `path` (DevTools opens it)
    and sums self time by function: "(program)" is the browser's own work (style, layout, paint, parsing),
    "(garbage collector)" V8's."""
    browser.call("Profiler.enable")
    browser.call("Profiler.setSamplingInterval", {"interval": 1000})
    browser.call("Profiler.start")
    time.sleep(seconds)
    profile = browser.call("Profiler.stop")["profile"]
    browser.call("Profiler.disable")
    with open(path, "w") as f:
        json.dump(profile, f)
    nodes = {node["id"]: node for node in profile["nodes"]}
    self_us = {}
    for node_id, delta in zip(profile.get("samples", []), profile.get("timeDeltas", [])):
        frame = nodes[node_id]["callFrame"]
        where = frame.get("url", "").rsplit("/", 1)[-1]
        name = frame.get("functionName") or "(anonymous)"
        key = "%s %s:%d" % (name, where, frame.get("lineNumber", -1) + 1) if where else name
        self_us[key] = self_us.get(key, 0) + max(0, delta)
    total = sum(self_us.values()) or 1
    idle = self_us.get("(idle)", 0)
    lines = ["page JavaScript profile over %d s: busy %.1f %% of the main thread (idle %.1f %%)" % (
        seconds, (total - idle) / total * 100, idle / total * 100), "self ms      %  function"]
    for key, us in sorted(self_us.items(), key=lambda kv: -kv[1])[:30]:
        lines.append("%7.0f %6.1f  %s" % (us / 1000, us / total * 100, key))
    return "\n".join(lines)


def number(text):
    return int(text.replace(",", ""))


def page(url, overrides):
    browser = DevTools(overrides)
    try:
        browser.navigate(url)
        deadline = time.monotonic() + 30
        while (browser.evaluate(PAGE_STATE) or ["", "", ""])[2] != "live":
            if time.monotonic() > deadline:
                print("not live: %r" % browser.evaluate(PAGE_STATE), flush=True)
                return
            time.sleep(0.1)
        print("ready", flush=True)
        for line in sys.stdin:
            words = line.split(maxsplit=2)
            if len(words) == 3 and words[0] == "profile":
                print(json.dumps({"text": js_profile(browser, int(words[1]), words[2].strip())}), flush=True)
                continue
            if line.strip() != "state":
                break
            t0 = time.monotonic()
            counts, notes, connection = browser.evaluate(PAGE_STATE)
            state = {"counts": counts, "notes": notes, "connection": connection,
                     "roundTripMs": (time.monotonic() - t0) * 1000}
            # "N requests" or "S of N requests", "the oldest M left the list", "W new while paused": what the
            # list took in is the three together. The skipped events are in the notes.
            held = re.search(r"([\d,]+) requests", counts)
            trimmed = re.search(r"oldest ([\d,]+) left", counts)
            waiting = re.search(r"([\d,]+) new while paused", counts)
            if held:
                state["received"] = sum(number(m.group(1)) for m in (held, trimmed, waiting) if m)
            skipped = re.search(r"skipped ([\d,]+) events", notes)
            state["dropped"] = number(skipped.group(1)) if skipped else 0
            print(json.dumps(state), flush=True)
    finally:
        browser.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--kakapo", required=True)
    r.add_argument("--dataset", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--duration", type=int, default=10)
    r.add_argument("--warmup", type=int, default=3)
    r.add_argument("--rate", type=int, default=10000)
    r.add_argument("--variants", default="none,curl,page")
    r.add_argument("--perf", action="store_true")
    r.add_argument("--keep-work", action="store_true")
    r.add_argument("--page-override", action="append", default=[], metavar="NAME=FILE")
    p = sub.add_parser("page")
    p.add_argument("url")
    p.add_argument("--override", action="append", default=[], metavar="NAME=FILE")
    args = parser.parse_args()
    if args.command == "page":
        page(args.url, dict(o.split("=", 1) for o in args.override))
        return
    for override in args.page_override:
        name, _, path = override.partition("=")
        if not name or "/" in name or not os.path.isfile(path):
            parser.error("--page-override wants NAME=FILE (a file of Web/ and a file to serve instead): %r" % override)
    args.variants = [v for v in args.variants.split(",") if v]
    for v in args.variants:
        if v not in ("none", "curl", "page", "page-patched"):
            parser.error("unknown variant %r (none, curl, page, page-patched)" % v)
        if v == "page-patched" and not args.page_override:
            parser.error("the variant page-patched needs --page-override NAME=FILE")
    if not (1 <= args.rounds <= 50 and 1 <= args.duration <= 600 and 0 <= args.warmup <= 120
            and 1 <= args.rate <= 1_000_000):
        parser.error("rounds 1-50, duration 1-600 s, warmup 0-120 s, rate 1-1000000")
    run(args)


if __name__ == "__main__":
    main()
