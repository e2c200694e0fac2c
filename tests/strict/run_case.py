"""run_case.py — one CTest case of the strict-peer tests (tests/strict/CMakeLists.txt).

  run_case.py SPEEDYD SPEEDY WORK speedyd VERSION plain|tls|plain-v3-flag|plain-v3.1-flag WHAT
  run_case.py SPEEDYD SPEEDY WORK get VERSION plain|tls WHAT
  run_case.py SPEEDYD SPEEDY WORK self VERSION plain|tls all|DETECTION
  run_case.py SPEEDYD SPEEDY WORK dictionaries

WHAT: empty (0 B), 1k, 3mb, concurrent (40 KiB + 45 KiB on one session), upload
(1 MiB POST; for speedyd upload-echo and upload-discard), and for speedyd slow-reader
(concurrent, by a SPDY/3.1 client whose WINDOW_UPDATEs leave 2 s late).
`speedyd` runs strict_spdy.py's client against speedyd (with its DEFAULT options, or
--plaintext-v3 3 for plain-v3-flag); `get` runs `speedy get` against strict_spdy.py's
server; `self` checks the strict peer itself (both ends strict, and a deliberately wrong
server it must catch). Files and processes live in WORK (emptied first); every process is stopped,
whatever happens, and every wait is bounded. Exit 0 pass, 1 fail, 77 skip.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("SPEEDY_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
PEER = os.path.join(HERE, "strict_spdy.py")
PYTHON = "/usr/bin/python3"

SIZES = {"empty": [("empty.bin", 0)], "1k": [("1k.bin", 1024)], "3mb": [("large.bin", 3145728)],
         # 85 KiB together: more than the 64 KiB a SPDY/3.1 session window starts with.
         "concurrent": [("a40k.bin", 40 * 1024), ("b45k.bin", 45 * 1024)]}
UPLOAD_BYTES = 1048576

# speedy's engine sends WINDOW_UPDATE in SPDY/2 on purpose (lib/session.c,
# speedy_session_credit: node's spdy-transport waits for them); draft 2 tells receivers to
# ignore unknown control frames, so the SPDY/2 cases tolerate them -- and print how many
# -- while still failing if speedy waits for one. Remove to make them violations again.
TOLERATE_V2 = ["--tolerate-v2-window-update"]

children = []
failures = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def check(what, got, expected):
    if got == expected:
        print("ok: %s" % what)
    else:
        print("FAIL: %s: got %r, expected %r" % (what, got, expected))
        failures.append(what)


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def start(argv, stdout, stderr):
    proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
    children.append(proc)
    return proc


def stop_all():
    for proc in children:
        if proc.poll() is None:
            proc.terminate()
    end = time.monotonic() + 10
    for proc in children:
        try:
            proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for_file(path, proc, seconds, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                return f.read().split()
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    print("FAIL: %s did not start (no %s)" % (what, path))
    sys.exit(1)


def show(path, limit=6000):
    if os.path.exists(path) and os.path.getsize(path):
        with open(path, errors="replace") as f:
            text = f.read()
        print("--- %s%s" % (path, " (last %d bytes)" % limit if len(text) > limit else ""))
        print(text[-limit:].rstrip())


def sanitizer_check(path):
    if not os.path.exists(path):
        return
    with open(path, errors="replace") as f:
        text = f.read()
    for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "SUMMARY: UndefinedBehaviorSanitizer"):
        if marker in text:
            print("FAIL: sanitizer report in %s" % path)
            show(path)
            failures.append("sanitizer")
            return


def make_site(work, what):
    site = os.path.join(work, "site")
    os.makedirs(site)
    for name, size in SIZES.get(what, []):
        with open(os.path.join(site, name), "wb") as f:
            f.write(os.urandom(size))
    return site


def make_certs(work):
    if shutil.which("openssl") is None:
        skip("openssl is not installed (needed for the TLS test certificates)")
    certs = os.path.join(work, "certs")
    rc = subprocess.call(["sh", os.path.join(SOURCE, "tests", "io", "gencerts.sh"), certs],
                         timeout=30)
    if rc != 0:
        print("FAIL: tests/io/gencerts.sh failed")
        sys.exit(1)
    return certs


def load_report(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL: no JSON report in %s: %s" % (path, e))
        failures.append("report")
        return None


def check_downloads(report, site, what):
    streams = {s["path"]: s for s in report["streams"]}
    for name, size in SIZES[what]:
        s = streams.get("/" + name, {})
        check("/%s status" % name, s.get("status"), 200)
        check("/%s length" % name, s.get("bytes"), size)
        check("/%s sha256" % name, s.get("sha256"), sha256_file(os.path.join(site, name)))


def client_verdict(report, proc_rc, log):
    if report is None:
        return
    check("strict client verdict (no violation, no failure, every stream complete)",
          report["ok"], True)
    if not report["ok"]:
        show(log)
    check("strict client exit status", proc_rc, 0)


# ---- strict client -> speedyd --------------------------------------------------------

def case_speedyd(speedyd, work, version, mode, what):
    if not os.access(speedyd, os.X_OK):
        skip("speedyd is not built (%s)" % speedyd)
    slow = what == "slow-reader"
    if slow:
        what = "concurrent"
    site = make_site(work, what)
    upload_mode = "discard" if what == "upload-discard" else "echo"
    argv = [speedyd, "--docroot", site, "--upload-path", "/upload", "--upload-mode", upload_mode,
            "--port-file", os.path.join(work, "speedyd.ports"),
            "--error-log", os.path.join(work, "speedyd.error.log")]
    client_tls = []
    if mode == "tls":
        certs = make_certs(work)
        argv += ["--listen", "127.0.0.1:0,tls", "--cert", os.path.join(certs, "server.pem"),
                 "--key", os.path.join(certs, "server.key")]
        client_tls = ["--tls", "--ca", os.path.join(certs, "ca.pem"), "--servername", "localhost"]
    else:
        argv += ["--listen", "127.0.0.1:0"]
        if mode == "plain-v3-flag":
            argv += ["--plaintext-v3", "3"]
        elif mode == "plain-v3.1-flag":
            argv += ["--plaintext-v3", "3.1"]
    # Otherwise speedyd's defaults: what a user runs.
    print("speedyd: %s" % " ".join(argv[1:]))
    out = open(os.path.join(work, "speedyd.stdout"), "w")
    err_path = os.path.join(work, "speedyd.stderr")
    server = start(argv, out, open(err_path, "w"))
    port = wait_for_file(os.path.join(work, "speedyd.ports"), server, 10, "speedyd")[0]
    client = [PYTHON, PEER, "client", "--version", version, "--connect", "127.0.0.1:" + port,
              "--host", "localhost:" + port, "--stall", "5", "--timeout", "40",
              "--json", os.path.join(work, "client.json")] + client_tls
    if version == "2":
        client += TOLERATE_V2
    if slow:
        # A compliant SPDY/3.1 client that returns credit late: 85 KiB are asked for, the
        # session window is 64 KiB, and our WINDOW_UPDATEs leave 2 s after the bytes were
        # consumed. The server must wait for them, however long (SPDY/3.1 2.6.8).
        client += ["--update-delay", "2"]
    upload = None
    if what.startswith("upload"):
        upload = os.path.join(work, "upload.bin")
        with open(upload, "wb") as f:
            f.write(os.urandom(UPLOAD_BYTES))
        client += ["--post", "/upload", upload, "--show-body", "4096"]
    else:
        for name, _ in SIZES[what]:
            client += ["--get", "/" + name]
    print("strict_spdy.py %s" % " ".join(client[2:]))
    log = os.path.join(work, "client.log")
    try:
        rc = subprocess.call(client, stdout=subprocess.DEVNULL, stderr=open(log, "w"), timeout=50)
    except subprocess.TimeoutExpired:
        rc = "timeout"   # cannot happen unless strict_spdy.py's own --timeout failed
    report = load_report(os.path.join(work, "client.json"))
    client_verdict(report, rc, log)
    if report is not None and report.get("streams"):
        if upload is None:
            check_downloads(report, site, what)
        else:
            s = report["streams"][0]
            check("POST /upload status", s["status"], 200)
            if what == "upload-echo":
                check("POST /upload echoed length", s["bytes"], UPLOAD_BYTES)
                check("POST /upload echoed sha256", s["sha256"], sha256_file(upload))
            else:
                try:
                    answer = json.loads(s.get("body", ""))
                except ValueError:
                    answer = s.get("body")
                check("POST /upload discard answer", answer, {"received": UPLOAD_BYTES})
        print("frames received: %s" % json.dumps(report.get("frames_received", {}), sort_keys=True))
        print("frames sent: %s" % json.dumps(report.get("frames_sent", {}), sort_keys=True))
        for t in report.get("tolerated", []):
            print("tolerated: %s" % t)
        for n in report.get("notes", []):
            print("note: %s" % n)
        print("longest pause of speedyd mid-exchange: %.3f s" % report.get("longest_silence_s", 0))
    if server.poll() is not None:
        print("FAIL: speedyd exited during the test (status %s)" % server.returncode)
        failures.append("speedyd exited")
    stop_all()
    sanitizer_check(err_path)
    if failures:
        show(err_path)
        show(os.path.join(work, "speedyd.error.log"), 3000)


# ---- speedy get -> strict server ------------------------------------------------------

def case_get(speedy, work, version, mode, what):
    if not os.access(speedy, os.X_OK):
        skip("speedy is not built (%s)" % speedy)
    site = make_site(work, what)
    report_path = os.path.join(work, "server.jsonl")
    argv = [PYTHON, PEER, "server", "--version", version, "--docroot", site, "--sessions", "1",
            "--stall", "5", "--timeout", "45", "--port-file", os.path.join(work, "server.port"),
            "--json", report_path]
    if version == "2":
        argv += TOLERATE_V2
    scheme, get_tls = "http", []
    if mode == "tls":
        certs = make_certs(work)
        argv += ["--tls", os.path.join(certs, "server.pem"), os.path.join(certs, "server.key")]
        scheme, get_tls = "https", ["--cacert", os.path.join(certs, "ca.pem")]
    print("strict_spdy.py %s" % " ".join(argv[2:]))
    server_log = os.path.join(work, "server.log")
    server = start(argv, subprocess.DEVNULL, open(server_log, "w"))
    port = wait_for_file(os.path.join(work, "server.port"), server, 10, "strict_spdy.py server")[0]
    base = "%s://localhost:%s" % (scheme, port)
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir)
    get = [speedy, "get", "--max-time", "30", "--spdy=" + version] + get_tls
    upload = None
    if what == "upload":
        upload = os.path.join(work, "upload.bin")
        with open(upload, "wb") as f:
            f.write(os.urandom(UPLOAD_BYTES))
        # curl's meaning: --data @FILE drops CR and LF, --data-binary sends the file as is.
        usage = subprocess.run([speedy, "get", "--help"], capture_output=True, text=True,
                               timeout=10).stdout
        data_option = "--data-binary" if "--data-binary" in usage else "--data"
        get += [data_option, "@" + upload, "-o", os.path.join(out_dir, "answer"), base + "/upload"]
    else:
        get += ["-d", out_dir] + [base + "/" + name for name, _ in SIZES[what]]
    print("speedy %s" % " ".join(get[1:]))
    get_err = os.path.join(work, "get.stderr")
    try:
        rc = subprocess.call(get, stdout=subprocess.DEVNULL, stderr=open(get_err, "w"), timeout=45)
    except subprocess.TimeoutExpired:
        rc = "timeout"
    check("speedy get exit status", rc, 0)
    if rc != 0:
        show(get_err)
    sanitizer_check(get_err)
    try:
        server_rc = server.wait(timeout=15)   # it ends after the one session
    except subprocess.TimeoutExpired:
        server_rc = "still running 15 s after speedy get ended"
    if upload is not None:
        path = os.path.join(out_dir, "answer")
        got = open(path).read() if os.path.exists(path) else None
        check("POST /upload answer (length and sha256 the server received)", got,
              "%d %s" % (UPLOAD_BYTES, sha256_file(upload)))
    else:
        for name, size in SIZES[what]:
            path = os.path.join(out_dir, name)
            check("%s saved" % name, os.path.exists(path), True)
            if os.path.exists(path):
                check("%s length" % name, os.path.getsize(path), size)
                check("%s sha256" % name, sha256_file(path), sha256_file(os.path.join(site, name)))
    sessions = []
    if os.path.exists(report_path):
        with open(report_path) as f:
            sessions = [json.loads(line) for line in f if line.strip()]
    check("sessions the strict server saw", len(sessions), 1)
    for s in sessions:
        check("strict server verdict on session %d (no violation, no failure)" % s["session"],
              s["ok"], True)
        print("frames received: %s" % json.dumps(s.get("frames_received", {}), sort_keys=True))
        print("frames sent: %s" % json.dumps(s.get("frames_sent", {}), sort_keys=True))
        print("settings received: %s" % json.dumps(s.get("settings_received", {}), sort_keys=True))
        for t in s.get("tolerated", []):
            print("tolerated: %s" % t)
        for n in s.get("notes", []):
            print("note: %s" % n)
    check("strict server exit status", server_rc, 0)
    stop_all()
    if failures:
        show(server_log)


# ---- the strict peer against itself -----------------------------------------------------

# A deliberately wrong server (--flow-as) and what the strict client must say about it.
DETECTIONS = {
    # speedyd's bug: a SPDY/3 client served with SPDY/3.1's session window.
    "v3-client-stalls-on-a-3.1-session-window": ("3", "3.1", ["--get", "/large.bin"], "stalled"),
    # ... and, receiving an upload, the same server grants a session window SPDY/3 lacks.
    "v3-stream-0-window-update-is-an-error": ("3", "3.1", ["--post", "/upload", None],
                                              "WINDOW_UPDATE for stream 0"),
    # A SPDY/3.1 server that forgets the session window oversteps it with 85 KiB at once.
    "v3.1-session-window-overstep": ("3.1", "3", ["--get", "/a40k.bin", "--get", "/b45k.bin"],
                                     "session window we announced"),
    # A SPDY/3 server ignoring windows entirely.
    "v3-stream-window-overstep": ("3", "2", ["--get", "/large.bin"], "stream window we announced"),
    # A SPDY/2 server waiting for a WINDOW_UPDATE SPDY/2 never sends.
    "v2-server-waiting-for-window-update": ("2", "3", ["--get", "/large.bin"], "stalled"),
}


def case_self(work, version, mode, what):
    detection = DETECTIONS.get(what)
    if detection:
        version, flow_as, ops, expected = detection
        site_kind = "concurrent" if "/a40k.bin" in ops else "3mb"
    else:
        flow_as, site_kind = None, "all"
    site = os.path.join(work, "site")
    os.makedirs(site)
    files = SIZES["empty"] + SIZES["1k"] + SIZES["3mb"] + SIZES["concurrent"]
    for name, size in files:
        with open(os.path.join(site, name), "wb") as f:
            f.write(os.urandom(size))
    upload = os.path.join(work, "upload.bin")
    with open(upload, "wb") as f:
        f.write(os.urandom(UPLOAD_BYTES))
    argv = [PYTHON, PEER, "server", "--version", version, "--docroot", site, "--sessions", "1",
            "--stall", "3", "--timeout", "30", "--port-file", os.path.join(work, "server.port"),
            "--json", os.path.join(work, "server.jsonl")]
    client_tls = []
    if mode == "tls":
        certs = make_certs(work)
        argv += ["--tls", os.path.join(certs, "server.pem"), os.path.join(certs, "server.key")]
        client_tls = ["--tls", "--ca", os.path.join(certs, "ca.pem"), "--servername", "localhost"]
    if flow_as:
        argv += ["--flow-as", flow_as]
    server_log = os.path.join(work, "server.log")
    server = start(argv, subprocess.DEVNULL, open(server_log, "w"))
    port = wait_for_file(os.path.join(work, "server.port"), server, 10, "strict_spdy.py server")[0]
    client = [PYTHON, PEER, "client", "--version", version, "--connect", "127.0.0.1:" + port,
              "--stall", "2" if detection else "5", "--timeout", "30",
              # Updates held longer than the wrong server needs to overstep, even on a
              # busy machine: the detection must not depend on timing.
              "--update-delay", "0.2" if detection else "0.02",
              "--json", os.path.join(work, "client.json")] + client_tls
    if detection:
        client += [upload if op is None else op for op in ops]
    else:
        for name, _ in files:
            client += ["--get", "/" + name]
        client += ["--post", "/upload", upload, "--show-body", "4096"]
    print("strict_spdy.py %s" % " ".join(client[2:]))
    log = os.path.join(work, "client.log")
    rc = subprocess.call(client, stdout=subprocess.DEVNULL, stderr=open(log, "w"), timeout=40)
    report = load_report(os.path.join(work, "client.json"))
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    stop_all()
    if report is None:
        return
    if detection:
        check("the strict client fails", rc, 1)
        said = report["violations"] + report["failures"]
        check("it says %r" % expected, any(expected in line for line in said), True)
        show(log)
        return
    client_verdict(report, rc, log)
    check_downloads(report, site, "1k")
    check_downloads(report, site, "3mb")
    check_downloads(report, site, "concurrent")
    check_downloads(report, site, "empty")
    answer = report["streams"][-1].get("body")
    check("POST /upload answer", answer, "%d %s" % (UPLOAD_BYTES, sha256_file(upload)))
    with open(os.path.join(work, "server.jsonl")) as f:
        session = json.loads(f.readline())
    check("strict server verdict", session["ok"], True)
    if failures:
        show(server_log)


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    speedyd, speedy, work, kind = sys.argv[1:5]
    args = sys.argv[5:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        if kind == "dictionaries":
            spec = os.path.join(os.environ.get("SPEEDY_SHARED_DIR", ""), "spec")
            if not os.path.exists(os.path.join(spec, "draft-mbelshe-httpbis-spdy-00.txt")):
                skip("the specification texts are not in %s (SPEEDY_SHARED_DIR)" % spec)
            rc = subprocess.call([PYTHON, PEER, "dictionaries", "--spec-dir", spec], timeout=30)
            check("embedded dictionaries equal the specification's", rc, 0)
        elif kind == "speedyd":
            case_speedyd(speedyd, work, *args)
        elif kind == "get":
            case_get(speedy, work, *args)
        elif kind == "self":
            case_self(work, *args)
        else:
            print("unknown case kind %r" % kind)
            return 2
    finally:
        stop_all()
    if failures:
        print("%d check(s) failed: %s" % (len(failures), ", ".join(failures)))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
