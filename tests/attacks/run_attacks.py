#!/usr/bin/env python3
"""run_attacks.py — attacks on a running speedyd, each one a pass/fail check.

    run_attacks.py --speedyd PATH --speedy PATH GROUP

For every attack of GROUP: a fresh speedyd on loopback (port 0 + --port-file), the attack
running from 127.0.0.2 (or more addresses), and meanwhile the legitimate client
(`speedy get` from 127.0.0.1) fetching a page. Each attack asserts that
  1. speedyd is still running afterwards,
  2. every legitimate fetch succeeded within DEADLINE_S seconds (generous: this also runs
     under ASan/UBSan),
  3. the server's peak RSS (VmHWM, reset when the attack starts) grew by less than the
     attack's stated bound over the RSS it had before,
  4. whatever the attack's own check says (the defence actually fired).
Groups: spdy_floods, spdy_streams, spdy_headers, slow, http1, budget_tls (integration) and
idle10k (system: 10,000 connections). Exit 0 when all pass, 1 otherwise, 77 to skip.
"""
import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
import attacks  # noqa: E402
import http1_checks  # noqa: E402

DEADLINE_S = 15.0
MIB = 1024


def expect_cut_off(stats):
    """Flood defences end the flooding connection (the meter, the flood cap, GOAWAY)."""
    if stats.get("closed_by_server", 0) == 0 and stats.get("goaway", 0) == 0:
        return "the server never ended a flooding connection"
    return None


def expect_address_refused(stats):
    """The per-address meter: after a few flooded sessions, the flooder's new connections
    are closed at once, without a session."""
    if stats.get("refused_at_once", 0) == 0:
        return "the flooder's address was never refused"
    if stats.get("sessions", 0) > 10:
        return "the flooder got %d sessions (expected a few before its address is refused)" % (
            stats["sessions"])
    return None


def expect_address_not_refused(stats):
    """With --address-flood-burst 0 only the per-connection meter acts: every reconnect
    gets a session."""
    # At most one unanswered: the connection the end of the attack cut short.
    if stats.get("sessions", 0) < 10 or stats.get("refused_at_once", 0) > 1:
        return "expected every reconnect to get a session (meter per address off)"
    return None


def expect_all_answered(stats):
    if stats.get("answered", 0) != stats.get("connections", -1) or stats["answered"] < 3000:
        return "only %d of %d clients behind one address were answered" % (
            stats.get("answered", 0), stats.get("connections", 0))
    return None


def expect_rst(status):
    def check(stats):
        if stats.get("rst_%d" % status, 0) == 0 and stats.get("goaway", 0) == 0:
            return "no RST_STREAM status %d (nor GOAWAY) seen" % status
        return None
    return check


def expect_slow_closed(stats):
    if stats.get("still_open", 0) > 0:
        return "%d slow connection(s) still open after the header timeout" % stats["still_open"]
    return None


def expect_tls_closed(stats):
    if stats.get("closed_by_server", 0) < stats.get("connections", 0):
        return "stalled handshakes still open: %d of %d closed" % (
            stats.get("closed_by_server", 0), stats.get("connections", 0))
    return None


def expect_idle_closed(stats):
    opened = stats.get("opened", 0)
    if opened < 10000:
        return "could open only %d connections (fd limit?)" % opened
    if stats.get("closed_by_server", 0) < opened * 9 // 10:
        return "only %d of %d idle connections were closed" % (stats["closed_by_server"], opened)
    return None


# name: (attack, speedyd args, seconds, RSS growth bound in KiB, check, url, http1, kwargs)
FAST = ["--header-timeout", "2000", "--handshake-timeout", "2000"]
CASES = {
    "spdy_floods": [
        ("ping_flood", attacks.ping_flood, [], 2, 32 * MIB, expect_cut_off),
        ("settings_flood", attacks.settings_flood, [], 2, 32 * MIB, expect_cut_off),
        ("window_update_flood", attacks.window_update_flood, [], 2, 32 * MIB, expect_cut_off),
        ("empty_data_flood", attacks.empty_data_flood, [], 2, 32 * MIB, expect_cut_off),
        ("unknown_control_flood", attacks.unknown_control_flood, [], 2, 32 * MIB,
         expect_cut_off),
        ("reconnecting_flood", attacks.reconnecting_flood, [], 2, 32 * MIB,
         expect_address_refused),
        ("many_clients_one_address", attacks.many_clients_one_address, [], 0.5, 32 * MIB,
         expect_all_answered),
        ("reconnecting_flood_meter_off", attacks.reconnecting_flood,
         ["--address-flood-burst", "0"], 2, 32 * MIB, expect_address_not_refused),
    ],
    "spdy_streams": [
        ("rapid_reset", attacks.rapid_reset, [], 2, 48 * MIB, expect_cut_off),
        ("made_you_reset", attacks.made_you_reset, [], 2, 48 * MIB, expect_cut_off),
        ("stream_id_exhaustion", attacks.stream_id_exhaustion, [], 2, 32 * MIB,
         expect_cut_off),
        ("streams_beyond_max", attacks.streams_beyond_max, [], 2, 64 * MIB, None),
        ("window_overflow", attacks.window_overflow, [], 2, 32 * MIB, expect_cut_off),
        ("data_on_dead_streams", attacks.data_on_dead_streams, [], 2, 32 * MIB,
         expect_cut_off),
        ("far_future_frames", attacks.far_future_frames, [], 2, 32 * MIB, expect_cut_off),
    ],
    "spdy_headers": [
        ("zlib_bomb", attacks.zlib_bomb, [], 2, 48 * MIB, expect_cut_off),
        ("oversized_header_block", attacks.oversized_header_block, [], 2, 32 * MIB,
         expect_cut_off),
        ("tiny_header_fields", attacks.tiny_header_fields, [], 2, 48 * MIB, None),
        ("piled_headers", attacks.piled_headers, [], 2, 32 * MIB, expect_cut_off),
    ],
    "slow": [
        ("never_reading", attacks.never_reading, [], 3, 96 * MIB, None),
        ("byte_window", attacks.byte_window, ["--plaintext-v3", "3"], 2, 32 * MIB,
         expect_cut_off),
        ("slowloris", attacks.slowloris, FAST, 4, 32 * MIB, expect_slow_closed),
        ("one_byte_a_second_spdy", attacks.one_byte_a_second_spdy, FAST, 4, 32 * MIB,
         expect_slow_closed),
        ("stalled_tls_handshake", attacks.stalled_tls_handshake, FAST + ["tls"], 3.5,
         32 * MIB, expect_tls_closed),
    ],
    "http1": [
        ("pipelining_flood", attacks.pipelining_flood, [], 2, 32 * MIB, None),
    ],
    "idle10k": [
        ("idle_connections_10000", attacks.idle_connections,
         ["--max-connections", "6000", "--max-connections-per-address", "200",
          "--header-timeout", "3000", "--handshake-timeout", "3000"], 5, 256 * MIB,
         expect_idle_closed),
    ],
}


def run_case(args, name, attack, server_args, seconds, bound_kb, check, http1=False):
    tls = "tls" in server_args
    server_args = [a for a in server_args if a != "tls"]
    server = A.Server(args.speedyd, server_args, tls=tls)
    failures = []
    url = "http://127.0.0.1:%d/index.html" % server.port
    try:
        ok, _, err = A.legit_get(args.speedy, url, http1=http1)
        if not ok:
            return ["%s: the warm-up fetch failed: %s" % (name, err.strip())], None
        before = server.rss_kb()
        server.reset_peak()
        stop, stats, thread = attacks.run_in_thread(attack, server)
        time.sleep(0.5)
        times = []
        end = time.monotonic() + seconds
        while True:
            ok, secs, err = A.legit_get(args.speedy, url, http1=http1, timeout_s=DEADLINE_S)
            times.append(secs)
            if not ok:
                failures.append("%s: legitimate fetch failed under attack after %.1f s: %s" %
                                (name, secs, err.strip()))
                break
            if time.monotonic() >= end:
                break
            time.sleep(0.1)
        stop.set()
        thread.join(30)
        peak = server.peak_rss_kb()
        if not server.alive():
            failures.append("%s: speedyd died (exit %s)" % (name, server.proc.poll()))
        else:
            ok, _, err = A.legit_get(args.speedy, url, http1=http1)
            if not ok:
                failures.append("%s: fetch after the attack failed: %s" % (name, err.strip()))
        if peak - before > bound_kb:
            failures.append("%s: peak RSS grew by %d KiB, bound %d KiB" %
                            (name, peak - before, bound_kb))
        if check is not None:
            problem = check(stats)
            if problem:
                failures.append("%s: %s (stats %s)" % (name, problem, stats))
        result = {"name": name, "fetches": len(times), "worst_s": max(times),
                  "growth_kb": peak - before, "stats": stats}
        print("%-26s %s  fetches %d, worst %.2f s, peak RSS +%d KiB, %s" % (
            name, "FAIL" if failures else "ok", len(times), max(times), peak - before,
            ", ".join("%s=%s" % kv for kv in sorted(stats.items())
                      if not isinstance(kv[1], bytes))), flush=True)
        return failures, result
    finally:
        status = server.stop()
        if "runtime error" in server.stderr_text or "AddressSanitizer" in server.stderr_text:
            failures.append("%s: sanitizer report:\n%s" % (name, server.stderr_text[-4000:]))
        elif status not in (0, None):
            failures.append("%s: speedyd exited %s at SIGTERM: %s" %
                            (name, status, server.stderr_text[-2000:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--speedyd", required=True)
    parser.add_argument("--speedy", required=True)
    parser.add_argument("group", choices=sorted(list(CASES) + ["budget_tls"]))
    parser.add_argument("--only", help="run this attack of the group only")
    args = parser.parse_args()
    if args.group == "idle10k":
        # 10,000 sockets here and up to --max-connections in speedyd (which inherits the
        # limit): ask for 32,768, settle for 12,000.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 32768
        if hard != resource.RLIM_INFINITY and hard < want:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            except (ValueError, OSError):
                want = hard
        if want < 12000:
            print("SKIP: needs 12000 file descriptors (hard limit %d; run as root)" % hard)
            return 77
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    failures = []
    if args.group in ("http1", "budget_tls"):
        failures += http1_checks.run_group(args, args.group)
    for case in CASES.get(args.group, []):
        name, attack, server_args, seconds, bound, check = case
        if args.only and args.only != name:
            continue
        f, _ = run_case(args, name, attack, server_args, seconds, bound, check,
                        http1=args.group == "http1")
        failures += f
    for f in failures:
        print("FAIL " + f)
    print("%s: %s" % (args.group, "FAILED" if failures else "all attacks withstood"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
