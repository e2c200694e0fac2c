#!/usr/bin/env python3
"""bench/attacks/run.py — the attacks of tests/attacks, measured instead of asserted.

    bench/attacks/run.py --speedyd build/src/speedyd/speedyd --speedy build/src/speedy \
        [--seconds 5] [--only NAME]

Build without sanitizers. For each attack: a fresh speedyd; the legitimate client's time
to fetch a 2 KiB page (`speedy get`, SPDY/3.1 — HTTP/1.1 for the HTTP/1.1 attack) unloaded
(median of 15), then the same under attack (median of the fetches made during --seconds);
the slowdown (target: at most 2x), the server's peak RSS over the attack (VmHWM, reset
when the attack starts) and what the defences did. Prints one table.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "attacks"))
import attacklib as A  # noqa: E402
import attacks  # noqa: E402

FAST = ["--header-timeout", "2000", "--handshake-timeout", "2000"]
# name, attack, speedyd args, HTTP/1.1 legit client
BENCH = [
    ("ping_flood", attacks.ping_flood, [], False),
    ("settings_flood", attacks.settings_flood, [], False),
    ("window_update_flood", attacks.window_update_flood, [], False),
    ("empty_data_flood", attacks.empty_data_flood, [], False),
    ("unknown_control_flood", attacks.unknown_control_flood, [], False),
    ("rapid_reset", attacks.rapid_reset, [], False),
    ("made_you_reset", attacks.made_you_reset, [], False),
    ("stream_id_exhaustion", attacks.stream_id_exhaustion, [], False),
    ("streams_beyond_max", attacks.streams_beyond_max, [], False),
    ("window_overflow", attacks.window_overflow, [], False),
    ("data_on_dead_streams", attacks.data_on_dead_streams, [], False),
    ("far_future_frames", attacks.far_future_frames, [], False),
    ("zlib_bomb", attacks.zlib_bomb, [], False),
    ("oversized_header_block", attacks.oversized_header_block, [], False),
    ("tiny_header_fields", attacks.tiny_header_fields, [], False),
    ("piled_headers", attacks.piled_headers, [], False),
    ("never_reading", attacks.never_reading, [], False),
    ("byte_window", attacks.byte_window, ["--plaintext-v3", "3"], False),
    ("slowloris", attacks.slowloris, FAST, False),
    ("one_byte_a_second_spdy", attacks.one_byte_a_second_spdy, FAST, False),
    ("stalled_tls_handshake", attacks.stalled_tls_handshake, FAST + ["tls"], False),
    ("pipelining_flood", attacks.pipelining_flood, [], True),
]


def fetch_times(speedy, url, http1, count=None, until=None):
    times = []
    while True:
        ok, secs, err = A.legit_get(speedy, url, http1=http1, timeout_s=30)
        if not ok:
            raise RuntimeError("fetch failed: %s" % err.strip())
        times.append(secs)
        if count is not None and len(times) >= count:
            return times
        if until is not None and time.monotonic() >= until:
            return times


def bench_one(args, name, attack, server_args, http1):
    tls = "tls" in server_args
    server = A.Server(args.speedyd, [a for a in server_args if a != "tls"], tls=tls)
    url = "http://127.0.0.1:%d/index.html" % server.port
    try:
        fetch_times(args.speedy, url, http1, count=3)  # warm up
        unloaded = statistics.median(fetch_times(args.speedy, url, http1, count=15))
        before = server.rss_kb()
        server.reset_peak()
        stop, stats, thread = attacks.run_in_thread(attack, server)
        time.sleep(0.5)
        loaded = fetch_times(args.speedy, url, http1, until=time.monotonic() + args.seconds)
        stop.set()
        thread.join(60)
        peak = server.peak_rss_kb()
        alive = server.alive()
    finally:
        server.stop()
    summary = ", ".join("%s=%s" % kv for kv in sorted(stats.items())
                        if not isinstance(kv[1], bytes))
    median = statistics.median(loaded)
    print("%-24s %8.1f %8.1f %7.2fx %8.1f %9.1f %9.1f  %-5s %s" % (
        name, unloaded * 1000, median * 1000, median / unloaded, max(loaded) * 1000,
        before / 1024, peak / 1024, "yes" if alive else "NO", summary), flush=True)
    return median / unloaded


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--speedyd", required=True)
    parser.add_argument("--speedy", required=True)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--only")
    args = parser.parse_args()
    print("speedyd under attack: the legitimate client's fetch of a 2 KiB page "
          "(speedy get, own process each time)")
    print("%-24s %8s %8s %8s %8s %9s %9s  %-5s %s" % (
        "attack", "idle ms", "load ms", "slowdown", "worst ms", "RSS MiB", "peak MiB",
        "alive", "what the defences did"))
    worst = 0.0
    for name, attack, server_args, http1 in BENCH:
        if args.only and args.only != name:
            continue
        worst = max(worst, bench_one(args, name, attack, server_args, http1))
    print("worst median slowdown: %.2fx (target: at most 2x)" % worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
