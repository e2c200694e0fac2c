#!/usr/bin/python3
"""bench/attacks/h2.py — the HTTP/2 attacks of tests/attacks, measured instead of asserted.

    /usr/bin/python3 bench/attacks/h2.py --speedyd build/src/speedyd/speedyd \
        --speedy build/src/speedy [--seconds 5] [--only NAME]

Build without sanitizers; run with /usr/bin/python3 (Debian's hpack and hyperframe live
there). For each attack of run_attacks.py's h2_* groups: a fresh speedyd; the legitimate
client's time to fetch a 2 KiB page (`speedy get --proto h2c`, h2 over TLS for the TLS
case; a new process and connection each time; the time is the client's own, its connect
plus the request to the last byte, without the process's start and exit) idle (median of 15), then under attack
(median of the fetches made during --seconds); the slowdown (target: at most 2x), the
worst fetch, the server's CPU use during the attack (share of one core), its RSS before and its peak during the attack (VmHWM, reset when
the attack starts), and what the server told the attacker. The first row, the control,
attacks nothing: it only keeps one core as busy as the Python attacker does, which on a
2-core machine slows the legitimate client by itself (--only control runs it alone).
--pin puts the attacker on a core of its own (CPU 1), as if on its own machine, and
speedyd and the legitimate client on CPU 0: the server's share of the damage, without
the attacker's CPU taken from the client on a 2-core machine. Every attack runs in a
process of its own (a thread would hold Python's GIL against the timing of the
legitimate fetches).
Prints one table; the figures
are in docs/performance.md, "HTTP/2 attacks seen from outside".
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "attacks"))
import attacklib as A  # noqa: E402
import run_attacks  # noqa: E402


def fetch_times(args, url, proto, insecure, count=None, until=None):
    times = []
    while True:
        ok, secs, err = A.legit_get(args.speedy, url, timeout_s=30, insecure=insecure,
                                    proto=proto)
        if not ok:
            raise RuntimeError("fetch failed: %s" % err.strip())
        times.append(secs)
        if count is not None and len(times) >= count:
            return times
        if until is not None and time.monotonic() >= until:
            return times


def no_attack_busy_client(server, stop, stats):
    """The control row: no traffic at all, only a Python loop as busy as an attacker's, to
    show how much of a slowdown is the attacker's CPU on a small machine, not the server."""
    n = 0
    while not stop.is_set():
        for _ in range(10000):
            n += 1
    stats["loops"] = n


def cpu_ms(pid):
    """The process's user + system CPU time so far (/proc/PID/stat, clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def attack_child(attack, server, stop, results, cpu):
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    stats = {}
    try:
        attack(server, stop, stats)
    finally:
        results.put(stats)


class AttackProcess:
    """The attack in a process of its own (forked), optionally pinned to one CPU. In a
    thread of this process it would hold Python's GIL while the timing of the legitimate
    fetches needs it, and the clock would measure the GIL, not the server (a busy loop in
    a thread slowed the "legitimate client" 4.8x with nothing attacked)."""

    def __init__(self, attack, server, cpu=None):
        ctx = multiprocessing.get_context("fork")
        self.stop = ctx.Event()
        self.results = ctx.Queue()
        self.proc = ctx.Process(target=attack_child,
                                args=(attack, server, self.stop, self.results, cpu),
                                daemon=True)
        self.proc.start()

    def finish(self, timeout):
        self.stop.set()
        try:
            stats = self.results.get(timeout=timeout)
        except Exception:  # noqa: BLE001 - a stuck attacker reports nothing
            stats = {}
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
        return stats


def bench_one(args, name, attack, server_args):
    tls = "tls" in server_args
    server = A.Server(args.speedyd, [a for a in server_args if a != "tls"], tls=tls)
    if args.pin:
        os.sched_setaffinity(server.proc.pid, {0})
    if tls:
        url, proto = "https://127.0.0.1:%d/index.html" % server.tls_port, "h2"
    else:
        url, proto = "http://127.0.0.1:%d/index.html" % server.port, "h2c"
    try:
        fetch_times(args, url, proto, tls, count=3)  # warm up
        idle = statistics.median(fetch_times(args, url, proto, tls, count=15))
        before = server.rss_kb()
        server.reset_peak()
        cpu_before, started = cpu_ms(server.proc.pid), time.monotonic()
        attacker = AttackProcess(attack, server, cpu=1 if args.pin else None)
        time.sleep(0.5)
        loaded = fetch_times(args, url, proto, tls, until=time.monotonic() + args.seconds)
        cpu = (cpu_ms(server.proc.pid) - cpu_before) / (time.monotonic() - started) / 10
        stats = attacker.finish(60)
        peak = server.peak_rss_kb()
        alive = server.alive()
    finally:
        server.stop()
    told = ", ".join("%s=%s" % (k, v) for k, v in sorted(stats.items())
                     if k.startswith(("goaway_", "rst_")) and k != "goaway_s_max")
    median = statistics.median(loaded)
    print("%-30s %7.2f %7.2f %7.2fx %8.2f %6.0f%% %7.1f %8.1f  %-5s %s" % (
        name, idle * 1000, median * 1000, median / idle, max(loaded) * 1000, cpu,
        before / 1024, peak / 1024, "yes" if alive else "NO", told or "-"), flush=True)
    return median / idle


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--speedyd", required=True)
    parser.add_argument("--speedy", required=True)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--only")
    parser.add_argument("--pin", action="store_true",
                        help="attacker on CPU 1; speedyd and the legitimate client on CPU 0")
    args = parser.parse_args()
    if args.pin:
        if len(os.sched_getaffinity(0)) < 2:
            print("bench/attacks/h2.py: --pin needs two CPUs", file=sys.stderr)
            return 1
        os.sched_setaffinity(0, {0})  # the legitimate client's processes inherit it
    if run_attacks.H2 is None:
        print("bench/attacks/h2.py: needs hpack and hyperframe (run with /usr/bin/python3)",
              file=sys.stderr)
        return 1
    print("speedyd under HTTP/2 attack: the legitimate client's fetch of a 2 KiB page "
          "(speedy get --proto h2c, own process each time, timed by the client: connect + request)%s" %
          ("; attacker on CPU 1, speedyd and the client on CPU 0" if args.pin else ""))
    print("%-30s %7s %7s %8s %8s %7s %7s %8s  %-5s %s" % (
        "attack", "idle ms", "load ms", "slowdown", "worst ms", "srv CPU", "RSS MiB", "peak MiB",
        "alive", "what the attacker was told"))
    worst = 0.0
    if not args.only or args.only == "control":
        bench_one(args, "control_busy_client", no_attack_busy_client, [])
    for group in run_attacks.H2_GROUPS:
        for name, attack, server_args, _seconds, _bound, _check in run_attacks.H2_CASES[group]:
            if args.only and args.only != name:
                continue
            worst = max(worst, bench_one(args, name, attack, server_args))
    if worst > 0:
        print("worst median slowdown: %.2fx (target: at most 2x)" % worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
