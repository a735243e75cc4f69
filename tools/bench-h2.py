"""The driver of tools/bench-h2 (run it through that script, which installs h2load and nginx and builds Kakapo).

What it measures: `kakapo replay` answering one recorded GET over cleartext HTTP/2 with prior knowledge (h2c),
next to nginx serving the same bytes with the same content type over h2c (`listen PORT http2;`), both under
h2load (Debian's nghttp2-client) on the same machine in the same run. Two bodies (a 1 KiB and a 16 KiB JSON
document by default) and two loads (by default 16 connections with 10 streams in flight on each, and with one)
are measured in rounds; within a round each (body, load) pair runs against both servers back to back, the
order swapped every round, so that the machine's other work falls on both alike.

  bench-h2.py run --kakapo BIN --out FILE.json [--rounds 3] [--requests 200000] [--clients 16]
                  [--streams 10,1] [--bodies 1024,16384] [--warmup 20000] [--ceiling BIN] [--keep-work]

--ceiling adds a third server to every round: tools/bench-h2-ceiling, a bare SwiftNIO h2c server answering
the same bytes through the same NIOHTTP2 codec and settings as Kakapo (what SwiftNIO's HTTP/2 costs alone).

For every run: req/s (h2load's own figure), the mean and longest time for a request, CPU µs per request of
the server (utime+stime from /proc of every process in its session: nginx's master and workers, Kakapo's one
process), h2load's CPU (this process's children's rusage) and the foreign CPU: what the machine used beyond
the two servers and h2load (from /proc/stat), in % of one core, as ../shared/peers/lib/peersbench.py does it.
The servers stay up through the run, so the idle ones' few ticks are counted as a server's, not as foreign.

Before measuring, each path is fetched from each server with curl --http2-prior-knowledge: the answer must be
HTTP/2, 200, the body byte for byte and content-type application/json, or nothing is measured.
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*parts):
    print("bench-h2:", *parts, file=sys.stderr, flush=True)


# /proc ------------------------------------------------------------------------------------------------


def proc_stat(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: the fields after it start after the last ")".
    rest = text[text.rindex(")") + 2:].split()
    # rest[3]=session, [11]=utime, [12]=stime
    return {"session": int(rest[3]), "ticks": int(rest[11]) + int(rest[12])}


def session_ticks(session):
    """CPU ticks of every living process of a session (each server is started in a session of its own)."""
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st["session"] == session:
                total += st["ticks"]
    return total


def busy_ticks():
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values[:8]) - idle


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Bodies -----------------------------------------------------------------------------------------------


def json_body(size):
    """A JSON document of exactly `size` bytes (at least 64): a list of items, padded in a last field."""
    items = []
    doc = {"items": items, "note": ""}
    n = 0
    while True:
        candidate = {"id": n, "name": "item %d" % n, "tags": ["a", "b"], "price": 12.5}
        items.append(candidate)
        if len(json.dumps(doc, separators=(",", ":"))) > size:
            items.pop()
            break
        n += 1
    text = json.dumps(doc, separators=(",", ":"))
    doc["note"] = "x" * (size - len(text))
    text = json.dumps(doc, separators=(",", ":"))
    assert len(text) == size, (len(text), size)
    return text


# Servers ----------------------------------------------------------------------------------------------


class Server:
    """A server process in a session of its own (so CPU counts every process it forks)."""

    def __init__(self, name, argv, work, port=None):
        self.name = name
        self.out = open(os.path.join(work, "%s.out" % name), "w+")
        self.err = open(os.path.join(work, "%s.err" % name), "w")
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.port = port
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.port is None:
                self.out.seek(0)
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.out.read())
                if m:
                    self.port = int(m.group(1))
            if self.port is not None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return
                except OSError:
                    pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("%s did not start: see %s" % (name, self.err.name))

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def ticks(self):
        return session_ticks(self.proc.pid)

    def stop(self, first=signal.SIGTERM):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, first)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        # nginx's workers may outlive their master for a moment: the whole group goes.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.out.close()
        self.err.close()


NGINX_CONF = """
worker_processes auto;
pid {work}/nginx.pid;
error_log {work}/nginx.err warn;
daemon off;
worker_rlimit_nofile 65536;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  types {{ }}
  default_type application/json;
  sendfile off; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000; keepalive_timeout 65;
  http2_max_requests 1000000;
  open_file_cache max=100 inactive=120s;
  client_body_temp_path {work}/tmp; proxy_temp_path {work}/tmp;
  fastcgi_temp_path {work}/tmp; uwsgi_temp_path {work}/tmp; scgi_temp_path {work}/tmp;
  server {{ listen 127.0.0.1:{port} http2; root {root}; location / {{ try_files $uri =404; }} }}
}}
"""


def start_nginx(work, root):
    """nginx as the peers harness runs it (static files, access log off, open_file_cache), listening for h2c
    with prior knowledge, with two changes for HTTP/2: http2_max_requests lifted so that no connection is closed
    during a run (at its default, 1000, nginx ends each connection with GOAWAY after 1000 requests and h2load
    counts the rest of that client's requests as failed), and sendfile off: over HTTP/2 nginx then writes the
    HEADERS and DATA frames apart and, with one stream in flight, each answer waits about 40 ms for a delayed
    ACK (356 req/s at -c 16 -m 1 here, 24k without sendfile; at -m 10 both are the same within noise)."""
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    port = free_port()
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(work=work, port=port, root=root))
    return Server("nginx", ["nginx", "-p", work, "-e", os.path.join(work, "nginx.err"), "-c", conf], work, port)


def write_cassette(path, bodies):
    interactions = []
    for url, text in bodies.items():
        interactions.append({
            "request": {"method": "GET", "url": url, "headers": [["Host", "bench.local"]]},
            "response": {"status": 200, "headers": [["Content-Type", "application/json"]], "body": {"text": text}},
        })
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "interactions": interactions}, f, indent=1)
        f.write("\n")


def check_answer(server, path, expected):
    """The answer to GET path over h2c with prior knowledge is HTTP/2, 200, application/json and the bytes."""
    with tempfile.NamedTemporaryFile() as body, tempfile.NamedTemporaryFile(mode="r") as head:
        p = subprocess.run(["curl", "-sS", "--http2-prior-knowledge", "-o", body.name, "-D", head.name,
                            "-w", "%{http_version} %{http_code}", "--max-time", "10", server.url(path)],
                           capture_output=True, text=True)
        got = open(body.name, "rb").read()
        headers = head.read().lower()
    problems = []
    if p.returncode != 0:
        problems.append("curl failed (%d): %s" % (p.returncode, p.stderr.strip()))
    elif p.stdout.strip() != "2 200":
        problems.append("answered HTTP version and status %r, not '2 200'" % p.stdout.strip())
    if not problems and got != expected:
        problems.append("body differs: %d bytes, not the %d expected" % (len(got), len(expected)))
    if not problems and "content-type: application/json" not in headers:
        problems.append("content-type is not application/json: %r" % headers)
    if problems:
        hint = ""
        if server.name == "kakapo":
            hint = " (does this build's listener speak h2c with prior knowledge?)"
        raise RuntimeError("%s, GET %s%s: %s" % (server.name, path, hint, "; ".join(problems)))


# Load -------------------------------------------------------------------------------------------------

FINISHED_RE = re.compile(r"finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s")
REQUESTS_RE = re.compile(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                         r"(\d+) errored, (\d+) timeout")
STATUS_RE = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
PROTOCOL_RE = re.compile(r"Application protocol: (\S+)")
REQUEST_TIME_RE = re.compile(r"time for request:\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)")
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def run_h2load(server, path, requests, clients, streams, servers):
    argv = ["h2load", "-n", str(requests), "-c", str(clients), "-m", str(streams), "-t", "1", server.url(path)]
    s0 = {s.name: s.ticks() for s in servers}
    b0 = busy_ticks()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b1 = busy_ticks()
    s1 = {s.name: s.ticks() for s in servers}
    out = p.stdout
    finished, counts, status = FINISHED_RE.search(out), REQUESTS_RE.search(out), STATUS_RE.search(out)
    if p.returncode != 0 or not (finished and counts and status):
        raise RuntimeError("h2load failed (%s): %s %s" % (p.returncode, out[-800:], p.stderr[-500:]))
    protocol = PROTOCOL_RE.search(out)
    times = REQUEST_TIME_RE.search(out)
    done = int(counts.group(3))
    succeeded = int(counts.group(4))
    cpu = {name: (s1[name] - s0[name]) / CLK_TCK for name in s0}
    h2load_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    busy = (b1 - b0) / CLK_TCK
    server_cpu = cpu[server.name]
    return {
        "server": server.name, "cmd": " ".join(argv),
        "protocol": protocol.group(1) if protocol else None,
        "rps": float(finished.group(3)),
        "requests": done, "succeeded": succeeded,
        "failed": int(counts.group(5)), "errored": int(counts.group(6)), "timeout": int(counts.group(7)),
        "status_2xx": int(status.group(1)),
        "non2xx": int(status.group(2)) + int(status.group(3)) + int(status.group(4)),
        "mean_ms": float(times.group(5)) * UNIT[times.group(6)] if times else None,
        "max_ms": float(times.group(3)) * UNIT[times.group(4)] if times else None,
        "server_cpu_s": server_cpu,
        "server_us_per_req": server_cpu * 1e6 / done if done else None,
        "server_cpu_pct": server_cpu / wall * 100,
        "h2load_cpu_pct": h2load_cpu / wall * 100,
        # What the machine used beyond the servers (the idle ones too) and h2load, in % of one core.
        "foreign_cpu_pct": max(0.0, (busy - sum(cpu.values()) - h2load_cpu) / wall * 100),
        "wall_s": wall,
    }


# Report -----------------------------------------------------------------------------------------------


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m = fmt(statistics.median(values))
    if len(values) == 1:
        return m
    return "%s (%s-%s)" % (m, fmt(min(values)), fmt(max(values)))


def kilo(v):
    return "%.1fk" % (v / 1000)


def per_round(a, b, key):
    """a's key over b's, per round in which both ran."""
    out = []
    for ra in a:
        for rb in b:
            if rb["round"] == ra["round"] and rb[key] and ra[key]:
                out.append(ra[key] / rb[key])
    return out


def summarize(runs, bodies, streams_list, clients):
    rows = []
    for size in bodies:
        for streams in streams_list:
            pick = [r for r in runs if r["body_bytes"] == size and r["streams"] == streams]
            k = [r for r in pick if r["server"] == "kakapo"]
            n = [r for r in pick if r["server"] == "nginx"]
            c = [r for r in pick if r["server"] == "nio-h2"]
            ratios = per_round(k, n, "rps")
            cpu_ratios = per_round(k, n, "server_us_per_req")
            rows.append({
                "body_bytes": size, "clients": clients, "streams": streams,
                "kakapo_rps": median([r["rps"] for r in k]), "nginx_rps": median([r["rps"] for r in n]),
                "ratio": median(ratios), "ratio_min": min(ratios) if ratios else None,
                "ratio_max": max(ratios) if ratios else None,
                "kakapo_us_per_req": median([r["server_us_per_req"] for r in k]),
                "nginx_us_per_req": median([r["server_us_per_req"] for r in n]),
                "cpu_ratio": median(cpu_ratios),
                "kakapo_mean_ms": median([r["mean_ms"] for r in k]),
                "nginx_mean_ms": median([r["mean_ms"] for r in n]),
                "h2load_cpu_pct": median([r["h2load_cpu_pct"] for r in pick]),
                "foreign_cpu_pct": [r["foreign_cpu_pct"] for r in pick],
                "failures": sum(r["failed"] + r["errored"] + r["timeout"] + r["non2xx"] for r in pick),
                "_k": k, "_n": n, "_ratios": ratios,
            })
            if c:
                rows[-1].update({
                    "ceiling_rps": median([r["rps"] for r in c]),
                    "ceiling_ratio": median(per_round(c, n, "rps")),
                    "kakapo_of_ceiling": median(per_round(k, c, "rps")),
                    "ceiling_us_per_req": median([r["server_us_per_req"] for r in c]),
                    "_c": c, "_c_ratios": per_round(c, n, "rps"),
                })
    return rows


def size_name(size):
    return "%d KiB" % (size // 1024) if size % 1024 == 0 else "%d B" % size


def markdown(rows, rounds):
    lines = [
        "| body | load (h2load) | nginx req/s | Kakapo req/s | Kakapo / nginx | CPU µs/req nginx / Kakapo (×) "
        "| mean ms nginx / Kakapo | h2load CPU | foreign CPU | failed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ceiling = [row for row in rows if "ceiling_rps" in row]
    for row in rows:
        body = size_name(row["body_bytes"])
        foreign = [v for v in row["foreign_cpu_pct"] if v is not None]
        lines.append("| %s | -c %d -m %d | %s | %s | %s | %s / %s (%s) | %s / %s | %s | %s | %d |" % (
            body, row["clients"], row["streams"],
            spread([r["rps"] for r in row["_n"]], kilo),
            spread([r["rps"] for r in row["_k"]], kilo),
            spread(row["_ratios"], lambda v: "%.3f" % v),
            "%.1f" % row["nginx_us_per_req"] if row["nginx_us_per_req"] else "-",
            "%.1f" % row["kakapo_us_per_req"] if row["kakapo_us_per_req"] else "-",
            "%.2f" % row["cpu_ratio"] if row["cpu_ratio"] else "-",
            "%.2f" % row["nginx_mean_ms"] if row["nginx_mean_ms"] is not None else "-",
            "%.2f" % row["kakapo_mean_ms"] if row["kakapo_mean_ms"] is not None else "-",
            "%.0f%%" % row["h2load_cpu_pct"] if row["h2load_cpu_pct"] is not None else "-",
            "%.0f-%.0f%%" % (min(foreign), max(foreign)) if foreign else "-",
            row["failures"],
        ))
    if ceiling:
        lines += ["", "| body | load (h2load) | bare NIO h2 req/s | NIO / nginx | Kakapo / NIO | CPU µs/req NIO |",
                  "|---|---|---|---|---|---|"]
        for row in ceiling:
            lines.append("| %s | -c %d -m %d | %s | %s | %s | %s |" % (
                size_name(row["body_bytes"]), row["clients"], row["streams"],
                spread([r["rps"] for r in row["_c"]], kilo),
                spread(row["_c_ratios"], lambda v: "%.3f" % v),
                "%.3f" % row["kakapo_of_ceiling"] if row["kakapo_of_ceiling"] else "-",
                "%.1f" % row["ceiling_us_per_req"] if row["ceiling_us_per_req"] else "-"))
    lines.append("")
    lines.append("%s; Kakapo / nginx is taken within each round. CPU is the server's (all its processes) per "
                 "request; h2load CPU and foreign CPU (other programs) are in %% of one core, of %d%%."
                 % ("One round" if rounds == 1 else "Medians of %d rounds, ranges in brackets" % rounds,
                    100 * (os.cpu_count() or 1)))
    return "\n".join(lines)


# Main -------------------------------------------------------------------------------------------------


def run(args):
    sizes = [int(x) for x in args.bodies.split(",")]
    for size in sizes:
        if not 64 <= size <= 16 * 1024 * 1024:
            sys.exit("bench-h2: a body size must be from 64 bytes to 16 MiB, not %d" % size)
    streams_list = [int(x) for x in args.streams.split(",")]
    work = tempfile.mkdtemp(prefix="bench-h2-")
    # nginx's workers drop root for another user, who must be able to read the bodies.
    os.chmod(work, 0o755)
    root = os.path.join(work, "www")
    os.makedirs(root)
    bodies = {}
    for size in sizes:
        path = "/body-%d.json" % size
        text = json_body(size)
        bodies[path] = text
        with open(os.path.join(root, path[1:]), "w", encoding="utf-8") as f:
            f.write(text)
    cassette = os.path.join(work, "cassette.json")
    write_cassette(cassette, bodies)

    servers = []
    runs = []
    try:
        servers.append(Server("kakapo", [args.kakapo, "replay", "--cassette", cassette, "--port", "0"], work))
        servers.append(start_nginx(work, root))
        if args.ceiling:
            servers.append(Server("nio-h2", [args.ceiling, "0", root], work))
        for server in servers:
            for path, text in bodies.items():
                check_answer(server, path, text.encode())
        log("both servers answer every path over h2c; warming up (%d requests each)" % args.warmup)
        for server in servers:
            for path in bodies:
                run_h2load(server, path, args.warmup, args.clients, max(streams_list), servers)
        for round_no in range(1, args.rounds + 1):
            # Each server in turn goes first, so that none is always measured right after the same one.
            shift = (round_no - 1) % len(servers)
            order = servers[shift:] + servers[:shift]
            for size in sizes:
                path = "/body-%d.json" % size
                for streams in streams_list:
                    for server in order:
                        r = run_h2load(server, path, args.requests, args.clients, streams, servers)
                        r.update({"round": round_no, "body_bytes": size, "streams": streams, "clients": args.clients})
                        runs.append(r)
                        shortfall = ""
                        if not r["succeeded"] == r["requests"] == args.requests or r["non2xx"]:
                            shortfall = ", %d of %d succeeded, %d non-2xx" % (r["succeeded"], args.requests,
                                                                              r["non2xx"])
                        log("round %d, %d bytes, -m %d, %-6s %8.0f req/s, %5.1f µs/req, h2load %3.0f%%, "
                            "foreign %3.0f%%%s" % (round_no, size, streams, server.name, r["rps"],
                                                   r["server_us_per_req"] or 0, r["h2load_cpu_pct"],
                                                   r["foreign_cpu_pct"], shortfall))
    finally:
        for server in servers:
            server.stop({"kakapo": signal.SIGINT, "nginx": signal.SIGQUIT}.get(server.name, signal.SIGTERM))
        if args.keep_work:
            log("work kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)

    rows = summarize(runs, sizes, streams_list, args.clients)
    table = markdown(rows, args.rounds)
    versions = {
        "h2load": subprocess.run(["h2load", "--version"], capture_output=True, text=True).stdout.strip(),
        "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip(),
        "kakapo": subprocess.run([args.kakapo, "--version"], capture_output=True, text=True).stdout.strip(),
        "ceiling": args.ceiling,
        "kernel": os.uname().release, "cpus": os.cpu_count(),
    }
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(sys.argv), "versions": versions,
        "rounds": args.rounds, "requests": args.requests, "clients": args.clients,
        "summary": [{k: v for k, v in row.items() if not k.startswith("_")} for row in rows],
        "runs": runs,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(table + "\n")
    print(table)
    failures = sum(row["failures"] for row in rows)
    if failures:
        log("%d requests failed or were not 2xx: see %s" % (failures, args.out))
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(prog="bench-h2.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("--kakapo", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--requests", type=int, default=200000)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--streams", default="10,1")
    p.add_argument("--bodies", default="1024,16384")
    p.add_argument("--warmup", type=int, default=20000)
    p.add_argument("--ceiling")
    p.add_argument("--keep-work", action="store_true")
    args = parser.parse_args()
    for name in ("rounds", "requests", "clients", "warmup"):
        if getattr(args, name) < 1:
            sys.exit("bench-h2: --%s must be at least 1" % name)
    try:
        sys.exit(run(args))
    except RuntimeError as e:
        sys.exit("bench-h2: %s" % e)


if __name__ == "__main__":
    main()
