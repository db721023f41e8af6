"""Exporter mode (--prometheus, --textfile) against a real Prometheus server.

Debian's prometheus scrapes the tool every second on 127.0.0.1 while the
workload runs; its HTTP API must then give exactly the workload's count
and a median in the bucket the tool's own JSON puts it in. promtool checks
the exposition; a load test scrapes 50 times a second for 30 s. All
traffic stays on 127.0.0.1."""

import json
import math
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import (LoopDevice, Skip, Tool, Work, cell, check_blk_count, count, make_cgroup,
                     remove_cgroup)
from harness import test
from harness import Process, run_process
from test_host import one_line_error



LATENCY = "iostackbreak_latency_seconds"
# The fixed le bounds: 2^8 .. 2^36 ns (src/sinks/prom.h), then +Inf.
LE_NS = [1 << k for k in range(8, 37)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, method="GET", timeout=10):
    """(status, content type, body) of one request."""
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


# ---- a strict reader of the text exposition format 0.0.4 ----

SAMPLE_RE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)")
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def parse_labels(text):
    labels, pos = {}, 0
    while pos < len(text):
        m = LABEL_RE.match(text, pos)
        assert m, f"bad label set at {pos}: {text!r}"
        assert m.group(1) not in labels, f"label {m.group(1)} twice: {text!r}"
        labels[m.group(1)] = re.sub(r'\\[\\"n]', lambda e: UNESCAPE[e.group(0)], m.group(2))
        pos = m.end()
        if pos < len(text):
            assert text[pos] == ",", f"no comma at {pos}: {text!r}"
            pos += 1
    return labels


def parse_exposition(text):
    """{(name, labels as sorted tuple): value}, after checking the grammar,
    HELP and TYPE before every family's samples, no duplicate series, and
    every histogram: the fixed le set in order, cumulative, +Inf = _count."""
    assert text.endswith("\n"), "the exposition must end with a newline"
    types, helps, samples = {}, set(), {}
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            helps.add(line.split(" ", 3)[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert name not in types, f"TYPE of {name} twice"
            types[name] = typ
            continue
        m = SAMPLE_RE.fullmatch(line)
        assert m, f"not a sample line: {line!r}"
        name, labels, value = m.group(1), parse_labels(m.group(2) or ""), float(m.group(3))
        family = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and types.get(name[: -len(suffix)]) == "histogram":
                family = name[: -len(suffix)]
        assert family in types and family in helps, f"no TYPE/HELP before {line!r}"
        key = (name, tuple(sorted(labels.items())))
        assert key not in samples, f"series twice: {line!r}"
        samples[key] = value
    check_histograms(samples)
    return samples


def check_histograms(samples):
    series = {}
    for (name, labels), v in samples.items():
        if name == LATENCY + "_bucket":
            rest = tuple(kv for kv in labels if kv[0] != "le")
            series.setdefault(rest, []).append((float(dict(labels)["le"]), v))
    for rest, buckets in series.items():
        buckets.sort()
        les = [le for le, _ in buckets]
        want = [n / 1e9 for n in LE_NS] + [math.inf]
        assert les == want, f"le bounds of {rest}: {les}"
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), f"buckets of {rest} not cumulative: {counts}"
        assert counts[-1] == samples[(LATENCY + "_count", rest)], f"+Inf != _count: {rest}"
        assert (LATENCY + "_sum", rest) in samples, rest


def le_text(le_ns):
    """An le bound as the tool writes it: exact decimal seconds."""
    if le_ns == math.inf:
        return "+Inf"
    whole, frac = divmod(le_ns, 10**9)
    return f"{whole}.{frac:09d}".rstrip("0").rstrip(".")


def value(samples, name, **labels):
    """The one series of name whose labels include these."""
    found = [v for (n, ls), v in samples.items()
             if n == name and all(dict(ls).get(k) == str(w) for k, w in labels.items())]
    assert len(found) == 1, f"{len(found)} series {name}{labels}"
    return found[0]


# ---- a real Prometheus on 127.0.0.1 ----

class Prometheus:
    """Debian's prometheus, scraping one target every second."""

    def __init__(self, tmp, target_port):
        if not shutil.which("prometheus"):
            raise Skip("prometheus is not installed (scripts/install-test-deps.sh installs it)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: iostackbreak\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.log = open(os.path.join(tmp, "prometheus.log"), "w+")
        self.proc = Process(
            ["prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"prometheus exited: {self.logs()}"
            try:
                if http_get(self.url + "/-/ready", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"prometheus not ready in 60 s: {self.logs()}")

    def logs(self):
        self.log.seek(0)
        return self.log.read()[-2000:]

    def query(self, expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        status, _, body = http_get(f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}")
        reply = json.loads(body)
        assert status == 200 and reply["status"] == "success", (expr, body)
        return reply["data"]["result"]

    def scalar(self, expr, at=None):
        """The value of a query that gives one series, or None."""
        result = self.query(expr, at)
        assert len(result) <= 1, (expr, result)
        return float(result[0]["value"][1]) if result else None

    def wait_scraped_after(self, when, series, timeout=30):
        """Waits for a sample of series taken after `when` (Unix time)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ts = self.scalar(f"timestamp({series})")
            if ts is not None and ts > when:
                return
            time.sleep(0.25)
        raise AssertionError(f"no scrape of {series} after {when}: {self.logs()}")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@test
def prometheus_counts_exactly_what_the_workload_did():
    """Two phases under -p: cached preads, then O_DIRECT preads. Raw
    samples before and after the second phase differ by exactly N; what
    Prometheus stored equals what the tool serves, bucket for bucket; the
    median of histogram_quantile lies in its bucket, and in the bucket of
    the p50 of the tool's own JSON."""
    n1, n2 = 1000, 2001
    read_count = f'{LATENCY}_count{{layer="syscall",op="read"}}'
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        first = Work("-c", "pread", str(n1), path)
        second = Work("-c", "-D", "pread", str(n2), path)
        pids = f"{first.pid},{second.pid}"
        port = free_port()
        exporter = Tool(f"--prometheus=127.0.0.1:{port}", "-T", "syscall", "-p", pids)
        jtool = Tool("-T", "syscall", "-p", pids, "--json")
        prom = None
        try:
            prom = Prometheus(tmp, port)
            # The cell is exported before any call: increase() sees all.
            prom.wait_scraped_after(time.time(), read_count)
            assert prom.scalar(read_count) == 0
            first.go()
            assert int(first.finish()["done"]) == n1
            prom.wait_scraped_after(time.time(), read_count)
            t_before = time.time()
            before = prom.scalar(read_count, at=t_before)
            second.go()
            assert int(second.finish()["done"]) == n2
            # Both workloads have exited: the target must still answer.
            prom.wait_scraped_after(time.time(), read_count)
            t_after = time.time()
            after = prom.scalar(read_count, at=t_after)
            assert before == n1, f"before the second phase Prometheus has {before}, want {n1}"
            assert after - before == n2, f"increase {after - before}, the workload did {n2}"
            assert prom.scalar('up{job="iostackbreak"}') == 1

            # Prometheus holds exactly what the tool serves: the workloads
            # have exited, so a scrape now has the values of the last sample.
            served = parse_exposition(http_get(f"http://127.0.0.1:{port}/metrics")[2])
            stored = {float(r["metric"]["le"]): float(r["value"][1]) for r in prom.query(
                f'{LATENCY}_bucket{{layer="syscall",op="read"}}', at=t_after)}
            for le in LE_NS + [math.inf]:
                key = (LATENCY + "_bucket", (("layer", "syscall"), ("le", le_text(le)),
                                             ("op", "read")))
                assert stored[le / 1e9] == served[key], (le, stored, served[key])
            assert prom.scalar(f'{LATENCY}_sum{{layer="syscall",op="read"}}', at=t_after) == \
                value(served, LATENCY + "_sum", layer="syscall", op="read")
            q = prom.scalar(f'histogram_quantile(0.5, sum by (le) '
                            f'({LATENCY}_bucket{{layer="syscall",op="read"}}))', at=t_after)
            # The median's bucket by the exporter's own counts: exact.
            rank = 0.5 * (n1 + n2)
            cum = [(le, stored[le / 1e9]) for le in LE_NS]
            hi = next(le for le, c in cum if c >= rank)
            lo = max((le for le in LE_NS if le < hi), default=0)
            assert lo / 1e9 <= q <= hi / 1e9, f"median {q} s outside its bucket [{lo}, {hi}] ns"
            # The tool's own JSON (a second tracer on the same calls): the
            # median lies in the bucket of its p50. Two tracers read the
            # clock at slightly different points of a call, so when its p50
            # is within 3% of a bound the next bucket is accepted too.
            rep = jtool.stop_json()[0]
            c = cell(rep, "syscall", "read")
            assert c["count"] == n1 + n2, c
            p50 = c["p50_ns"]
            jlo = max((le for le in LE_NS if le <= p50), default=0)
            jhi = min(le for le in LE_NS if le > p50)
            if p50 < jlo * 1.03 and jlo > LE_NS[0]:
                jlo //= 2
            if p50 > jhi * 0.97:
                jhi *= 2
            assert jlo / 1e9 <= q <= jhi / 1e9, \
                f"histogram_quantile(0.5) = {q} s, JSON p50 {p50} ns in [{jlo}, {jhi}) ns"
            slowest = prom.scalar('max_over_time(scrape_duration_seconds'
                                  '{job="iostackbreak"}[5m])')
            print(f"  median {q * 1e6:.2f} us in [{lo / 1e3:g}, {hi / 1e3:g}] us (JSON p50 "
                  f"{p50 / 1e3:.2f} us); slowest scrape as Prometheus timed it: "
                  f"{slowest * 1e3:.2f} ms", flush=True)
            # Scrape time is reported, not asserted: timing targets live in
            # the benchmarks; on a loaded 2-CPU machine one scrape took 13 ms.
        finally:
            if prom:
                prom.stop()
        rc, out, err = exporter.stop(signal.SIGTERM)
        assert rc == 0, err
        assert out == "", f"exporter mode printed a report: {out}"


@test
def promtool_finds_no_problems_in_a_full_exposition():
    """All layers with -P -D -F --stats: every family, every label."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool is not installed (scripts/install-test-deps.sh installs it)")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        # Its own disk. On a kernel that hides some completions from BPF
        # (harness.check_blk_count), a scrape in the middle of a run cannot
        # know of one yet (it is counted as missed at the struct's next
        # use, or at the end): a JSON run beside it, stopped after the
        # scrape, counts them apart; both miss the same ones.
        loop = LoopDevice(tmp, size_mib=8)
        work = Work("-D", "pread", "300", loop.dev)
        port = free_port()
        tool = Tool(f"--prometheus={port}", "-P", "-D", "-F", "--stats", "--top", "20")
        beside = Tool("-T", "blk", "-d", loop.name, "--json")
        work.go()
        work.finish()
        url = f"http://127.0.0.1:{port}"
        status, ctype, text = http_get(url + "/metrics")
        assert status == 200, status
        assert ctype == "text/plain; version=0.0.4; charset=utf-8", ctype
        p = run_process([promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True)
        assert p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(), \
            f"promtool: {p.stdout} {p.stderr}"
        samples = parse_exposition(text)
        names = {n for n, _ in samples}
        for family in ("iostackbreak_build_info", LATENCY + "_bucket",
                       "iostackbreak_dropped_events_total", "iostackbreak_skipped_cells",
                       "iostackbreak_bpf_run_time_seconds_total", "iostackbreak_bpf_runs_total",
                       "iostackbreak_time_seconds_total"):
            assert family in names, f"no {family}"
        # Where the time of reads went: the root layer's self time and
        # each wait, with the workload's 300 direct reads in them.
        read_parts = {dict(ls)["part"]: v for (n, ls), v in samples.items()
                      if n == "iostackbreak_time_seconds_total" and dict(ls)["op"] == "read"}
        assert {"syscall", "io_wait", "blocked", "runqueue"} <= set(read_parts), read_parts
        assert read_parts["io_wait"] > 0, read_parts
        assert value(samples, "iostackbreak_build_info", kernel=os.uname().release) == 1
        # The workload's 300 O_DIRECT reads, under its pid and name, at
        # both layers (blk: with its disk and flags).
        assert value(samples, LATENCY + "_count", layer="syscall", op="read", pid=work.pid,
                     comm="iowork") == 300
        blk = [v for (n, ls), v in samples.items() if n == LATENCY + "_count"
               and dict(ls).get("pid") == str(work.pid) and dict(ls)["layer"] == "blk"
               and dict(ls)["disk"] == loop.name]
        # Its 300 requests on its disk: every one seen, or counted missed
        # by the run beside it.
        rep = beside.stop_json()[-1]
        check_blk_count(rep, count(rep, "blk", "read"), 300, "the scraped pid's reads")
        assert sum(blk) == count(rep, "blk", "read"), (blk, rep["cells"])
        assert all("disk" in dict(ls) and "flags" in dict(ls) for (n, ls) in samples
                   if n == LATENCY + "_count" and dict(ls)["layer"] == "blk")
        for path_, method, want in (("/", "GET", 404), ("/metrics/x", "GET", 404),
                                    ("/metrics", "POST", 405), ("/metrics", "HEAD", 200)):
            assert http_get(url + path_, method)[0] == want, (path_, method)
        rc, _, err = tool.stop()
        assert rc == 0, err


@test
def textfile_is_replaced_whole_every_interval():
    promtool = shutil.which("promtool")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        out = os.path.join(tmp, "textfile")
        os.mkdir(out)
        prom = os.path.join(out, "iostackbreak.prom")
        work = Work("-c", "pread", "777", os.path.join(tmp, "data"))
        tool = Tool(f"--textfile={out}", "1", "-T", "syscall", "-p", str(work.pid))
        first = os.stat(prom)  # written before the ready line
        work.go()
        work.finish()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(prom) as f:
                samples = parse_exposition(f.read())
            if value(samples, LATENCY + "_count", layer="syscall", op="read") == 777:
                break
            time.sleep(0.2)
        assert value(samples, LATENCY + "_count", layer="syscall", op="read") == 777
        assert os.stat(prom).st_mtime_ns > first.st_mtime_ns
        assert stat.S_IMODE(os.stat(prom).st_mode) == 0o644
        rc, stdout, err = tool.stop(signal.SIGTERM)
        assert rc == 0 and stdout == "", (rc, stdout, err)
        assert os.listdir(out) == ["iostackbreak.prom"], os.listdir(out)
        if not promtool:  # counted: under CI a skip fails the run
            raise Skip("promtool missing: the file's exposition was not checked by it "
                       "(scripts/install-deps.sh installs it)")
        with open(prom) as f:
            p = run_process([promtool, "check", "metrics"], stdin=f,
                               capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr


@test
def exporter_errors_are_one_clear_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        t0 = time.monotonic()
        one_line_error([f"--prometheus={port}"], 1, f"127.0.0.1:{port}", "in use",
                       "--prometheus=[ADDR:]PORT")
        # Refused before any BPF program is loaded: at once.
        assert time.monotonic() - t0 < 1.0, time.monotonic() - t0
    # TEST-NET-1 (RFC 5737) is no address of this machine: bind() refuses it.
    one_line_error(["--prometheus=192.0.2.1:9633"], 1, "not an address of this machine")
    one_line_error(["--prometheus=999.1.1.1:9633"], 2, "invalid address '999.1.1.1'")
    one_line_error(["--prometheus=localhost:9633"], 2, "numeric address")
    one_line_error(["--prometheus=70000"], 2, "invalid port '70000'")
    one_line_error([f"--prometheus={free_port()}", "--json"], 2, "drop --json")
    one_line_error([f"--prometheus={free_port()}", "5"], 2, "no interval")
    one_line_error([f"--prometheus={free_port()}", "--", "true"], 2, "-p PID")
    one_line_error(["--textfile=/nonexistent/dir"], 1, "/nonexistent/dir",
                   "existing directory")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))


@test
def fifty_scrapes_a_second_for_thirty_seconds():
    """All layers traced while a workload reads; every scrape parses and
    holds, counters only grow from one second's scrapes to the next, and
    the tool's memory stays flat."""
    per_second, seconds = 50, 30
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        work = Work("-c", "-P", "200", "pread", "200000", os.path.join(tmp, "data"))
        # ASan keeps freed memory in quarantine (256 MiB by default), so the
        # RSS of the sanitized build grows until that is full whatever the
        # tool does: without it, freed memory is reused as in the plain
        # build, and a leak shows as growth (and LeakSanitizer's at exit).
        env = None
        if os.environ.get("IOSB_SANITIZED"):
            env = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0"}
        tool = Tool(f"--prometheus={port}", env=env)
        work.go()
        try:
            # One at a time first: the time of a scrape alone.
            alone = []
            for _ in range(20):
                t = time.monotonic()
                assert http_get(url)[0] == 200
                alone.append(time.monotonic() - t)
            alone.sort()

            def batch():
                results = [None] * per_second

                def one(i):
                    try:
                        results[i] = http_get(url, timeout=20)
                    except Exception as e:  # reported below, with the others
                        results[i] = (None, None, repr(e))
                threads = [threading.Thread(target=one, args=(i,)) for i in range(per_second)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                return results

            batch()  # warm-up: the server's buffers at their working size
            rss = [rss_kib(tool.proc.pid)]
            previous_max = {}
            scrapes = 0
            batch_time = []
            t_start = time.monotonic()
            for second in range(seconds):
                t = time.monotonic()
                results = batch()
                batch_time.append(time.monotonic() - t)
                low, high = {}, {}
                for status, _, body in results:
                    assert status == 200, f"second {second}: a scrape failed: {status} {body}"
                    samples = parse_exposition(body)
                    scrapes += 1
                    for key, v in samples.items():
                        if key[0].endswith(("_total", "_bucket", "_count", "_sum")):
                            low[key] = min(low.get(key, v), v)
                            high[key] = max(high.get(key, v), v)
                # Started after the last batch ended: never below it.
                for key, v in low.items():
                    assert v >= previous_max.get(key, 0), \
                        f"second {second}: {key} went down: {previous_max[key]} -> {v}"
                previous_max = high
                rss.append(rss_kib(tool.proc.pid))
                left = t_start + second + 1 - time.monotonic()
                if left > 0:
                    time.sleep(left)
            reads = value(previous_max, LATENCY + "_count", layer="syscall", op="read")
        finally:
            rc, _, err = tool.stop()
            work.proc.kill()
            work.proc.wait()
        assert rc == 0, err
        assert scrapes == per_second * seconds
        growth = rss[-1] - rss[0]
        batch_time.sort()
        print(f"  {scrapes} scrapes: one alone median {alone[len(alone) // 2] * 1e3:.2f} ms, "
              f"max {alone[-1] * 1e3:.2f} ms; a batch of {per_second} concurrent: median "
              f"{batch_time[len(batch_time) // 2] * 1e3:.0f} ms, max {batch_time[-1] * 1e3:.0f} ms;"
              f" RSS {rss[0]} -> {rss[-1]} KiB (min {min(rss)}, max {max(rss)}); "
              f"syscall reads seen {reads:.0f}", flush=True)
        # A scrape alone, median: 1.44 and 2.07 ms in two runs (max 7.9 and
        # 12.1 ms, a shared host's preemptions), with every layer traced
        # and a workload reading meanwhile.
        assert alone[len(alone) // 2] < 0.010, f"a scrape alone takes {alone[len(alone) // 2]} s"
        # RSS over the 1,500 scrapes: -28 and -120 KiB in two runs, between
        # its lowest and highest 180 and 188 KiB apart (a response is 62
        # KiB, 50 of them in flight at once). A leak of 0.7 KiB a scrape
        # would pass 1 MiB, and the second half's swing stays under half.
        # The sanitized build (quarantine off, above): growth 256 and 396
        # KiB, the second half's swing 580 and 604 KiB in two runs (ASan's
        # own allocator and shadow memory): twice the room for the swing.
        swing = 1024 if os.environ.get("IOSB_SANITIZED") else 512
        assert growth <= 1024, f"RSS grew {growth} KiB over {scrapes} scrapes: {rss}"
        assert max(rss[len(rss) // 2:]) - min(rss[len(rss) // 2:]) <= swing, \
            f"RSS not flat in the second half: {rss}"


@test
def an_exporter_keeps_serving_after_its_p_targets_exit():
    """Unlike a plain -p run, exporter mode does not end with its process."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-c", "pread", "400", path)
        port = free_port()
        tool = Tool("-T", "syscall", "-p", str(work.pid), f"--prometheus={port}")
        work.go()
        work.finish()
        time.sleep(1.0)
        assert tool.proc.poll() is None, "the exporter ended with its -p target"
        status, _, body = http_get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200, status
        samples = parse_exposition(body)
        assert value(samples, LATENCY + "_count", layer="syscall", op="read") == 400
        rc, _, err = tool.stop()
        assert rc == 0, err


def promtool_check(text):
    """promtool check metrics on an exposition: no error, no warning."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool is not installed (scripts/install-test-deps.sh installs it)")
    p = run_process([promtool, "check", "metrics"], input=text, capture_output=True,
                       text=True)
    assert p.returncode == 0 and not (p.stdout + p.stderr).strip(), \
        f"promtool: {p.stdout} {p.stderr}"


@test
def prometheus_stores_the_cgroup_labels():
    """-G scraped by a real Prometheus: two cgroups made by the test, named
    as containerd names its scopes in a Kubernetes pod slice and plainly,
    each running a known number of preads. Prometheus holds exactly each
    workload's own count under its cgroup label, with the container_id and
    pod_uid labels the names give; promtool passes the exposition."""
    from test_breakdown import cgroup2_root
    root, _ = cgroup2_root()
    cid, uid = "9e" * 32, "0b7c4f5e-2d1a-4c3b-8e9f-7a6b5c4d3e2f"
    top = f"/iosb-promG-{os.getpid()}"
    pod = f"{top}/kubepods-burstable-pod{uid.replace('-', '_')}.slice"
    groups = {f"{pod}/cri-containerd-{cid}.scope": (310, cid, uid), f"{top}/plain": (170, "", "")}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        with open(path, "wb") as f:
            f.write(b"x" * 65536)
        works = {g: Work("pread", str(n), path) for g, (n, _, _) in groups.items()}
        for g, w in works.items():
            with open(make_cgroup(root + g) + "/cgroup.procs", "w") as f:
                f.write(str(w.pid))
        port = free_port()
        tool = Tool(f"--prometheus={port}", "-T", "syscall", "-G", "--cgroup", root + top)
        prom = None
        try:
            prom = Prometheus(tmp, port)
            for w in works.values():
                w.go()
            done = {g: int(w.finish()["done"]) for g, w in works.items()}
            t0 = time.time()
            for g, (n, c, u) in groups.items():
                assert done[g] == n, done
                series = f'{LATENCY}_count{{layer="syscall",op="read",cgroup="{g}"}}'
                prom.wait_scraped_after(t0, series)
                got = prom.query(series)
                assert len(got) == 1, got
                labels = got[0]["metric"]
                assert float(got[0]["value"][1]) == done[g], (g, got)
                # Prometheus drops empty labels: absent is "".
                assert labels.get("container_id", "") == c, labels
                assert labels.get("pod_uid", "") == u, labels
                print(f"  {g[len(top):]}: Prometheus {got[0]['value'][1]} reads, "
                      f"the workload {done[g]}", flush=True)
            promtool_check(http_get(f"http://127.0.0.1:{port}/metrics")[2])
        finally:
            if prom:
                prom.stop()
            rc, _, err = tool.stop(signal.SIGTERM)
            assert rc == 0, err


@test
def gone_cgroups_leave_the_scrape_after_their_grace():
    """-G in exporter mode with 500 short-lived cgroups, in 10 batches of 50
    named as Docker names its scopes, each running 5 preads. At the scrape
    after a batch, the cgroup series are exactly that batch's (the last
    batch's, gone for more than --cgroup-grace, have left), each with its 5
    reads and the container id its name holds; after the last batch, none
    is left. The kernel's map sheds them too: with --max-keys 400, below
    the 500 cgroups' 1000 keys, nothing is dropped. promtool passes."""
    from test_breakdown import cgroup2_root
    root, _ = cgroup2_root()
    top = make_cgroup(os.path.join(root, f"iosb-grace-{os.getpid()}"))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        with open(path, "wb") as f:
            f.write(b"x" * 65536)
        port = free_port()
        tool = Tool(f"--prometheus={port}", "-T", "syscall", "-G", "--cgroup", top,
                    "--cgroup-grace=1", "--max-keys=400")
        url = f"http://127.0.0.1:{port}/metrics"
        most = 0
        for batch in range(10):
            ids = {}
            for i in range(50):
                cid = f"{batch * 50 + i:064x}"
                d = make_cgroup(os.path.join(top, f"docker-{cid}.scope"))
                w = Work("pread", "5", path)
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(w.pid))
                w.go()
                assert int(w.finish()["done"]) == 5
                remove_cgroup(d)
                ids[d[len(root):]] = cid
            time.sleep(1.2)  # the last batch: found gone one scrape ago, > 1 s
            status, _, text = http_get(url)
            assert status == 200, status
            if batch == 0:
                promtool_check(text)
            samples = parse_exposition(text)
            reads = {dict(ls)["cgroup"]: (v, dict(ls)) for (n, ls), v in samples.items()
                     if n == LATENCY + "_count" and dict(ls)["op"] == "read"}
            assert set(reads) == set(ids), (batch, sorted(set(reads) ^ set(ids))[:5])
            for cg, (v, ls) in reads.items():
                assert v == 5, (cg, v)
                assert ls["container_id"] == ids[cg] and ls["pod_uid"] == "", ls
            most = max(most, len({dict(ls)["cgroup"] for (n, ls) in samples
                                  if "cgroup" in dict(ls)}))
        # Gone, all of them: two scrapes a grace apart empty the scrape.
        http_get(url)
        time.sleep(1.2)
        status, _, text = http_get(url)
        samples = parse_exposition(text)
        left = {dict(ls).get("cgroup") for (n, ls), _ in samples.items() if "cgroup" in dict(ls)}
        assert not left, sorted(left)[:5]
        assert value(samples, "iostackbreak_dropped_events_total",
                     reason="breakdown_map_full") == 0
        print(f"  500 cgroups made and gone: at most {most} cgroup label values in a scrape, "
              f"none at the end, no key dropped", flush=True)
        rc, _, err = tool.stop(signal.SIGTERM)
        assert rc == 0, err
