"""http1_checks.py — one-shot hostile requests and the answers they must get.

HTTP/1.1 request smuggling shapes, obsolete line folding, a 64 MiB chunk extension, long
request lines and headers, many ranges, log injection; and the memory budget (new work
refused with REFUSED_STREAM / 503 past it, the process unharmed). Each check returns a
failure message or None; run_group runs a group's checks on one fresh speedyd.
"""
import socket
import threading
import struct
import time

import attacklib as A
import attacks

HOST = b"Host: x\r\n"


def _expect_status(port, request, want, name):
    answer = A.http1_exchange(port, request)
    got = A.status_of(answer)
    if got != want:
        return "%s: expected %d, got %s (%r)" % (name, want, got, answer[:120])
    if want >= 400 and b"connection: close" not in answer.lower():
        return "%s: a %d without Connection: close" % (name, want)
    return None


SMUGGLING = [
    ("content_length_and_chunked",
     b"POST /index.html HTTP/1.1\r\n" + HOST +
     b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("two_content_lengths",
     b"POST /index.html HTTP/1.1\r\n" + HOST +
     b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
    ("chunked_not_last",
     b"POST /index.html HTTP/1.1\r\n" + HOST +
     b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400),
    ("unknown_coding", b"POST /index.html HTTP/1.1\r\n" + HOST +
     b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 400),
    ("space_before_colon", b"GET /index.html HTTP/1.1\r\nHost : x\r\n\r\n", 400),
    ("content_length_sign", b"POST /index.html HTTP/1.1\r\n" + HOST +
     b"Content-Length: +5\r\n\r\nhello", 400),
    ("bare_lf", b"GET /index.html HTTP/1.1\nHost: x\n\n", 400),
    ("obs_fold_space", b"GET /index.html HTTP/1.1\r\n" + HOST +
     b"X-A: one\r\n two\r\n\r\n", 400),
    ("obs_fold_tab", b"GET /index.html HTTP/1.1\r\n" + HOST +
     b"X-A: one\r\n\ttwo\r\n\r\n", 400),
    ("long_request_line", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n" + HOST + b"\r\n", 414),
    ("long_header", b"GET /index.html HTTP/1.1\r\n" + HOST +
     b"X-Long: " + b"b" * 100000 + b"\r\n\r\n", 431),
    ("many_headers", b"GET /index.html HTTP/1.1\r\n" + HOST +
     b"".join(b"X-%d: 1\r\n" % i for i in range(5000)) + b"\r\n", 431),
]


def check_smuggling(server):
    problems = []
    for name, request, want in SMUGGLING:
        problem = _expect_status(server.port, request, want, name)
        if problem:
            problems.append(problem)
    # The next request must not have been smuggled behind a rejected one.
    answer = A.http1_exchange(server.port,
                              b"POST /index.html HTTP/1.1\r\n" + HOST +
                              b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                              b"0\r\n\r\nGET /big.bin HTTP/1.1\r\n" + HOST + b"\r\n")
    if answer.count(b"HTTP/1.1 ") != 1:
        problems.append("smuggled request answered: %r" % answer[:200])
    return problems


def check_empty_values(server):
    """Empty header values (the first field of a request included) are valid: 200."""
    problems = []
    for name, request in (
            ("empty_first_value", b"GET /index.html HTTP/1.1\r\nX-Empty:\r\n" + HOST + b"\r\n"),
            ("empty_value_later", b"GET /index.html HTTP/1.1\r\n" + HOST + b"X-Empty: \r\n\r\n")):
        problem = _expect_status(server.port, request, 200, name)
        if problem:
            problems.append(problem)
    return problems


def check_many_ranges(server):
    ranges = b",".join(b"%d-%d" % (i * 2, i * 2) for i in range(2500))
    start = time.monotonic()
    answer = A.http1_exchange(server.port, b"GET /big.bin HTTP/1.1\r\n" + HOST +
                              b"Range: bytes=" + ranges + b"\r\nConnection: close\r\n\r\n",
                              read_s=20)
    status = A.status_of(answer)
    if status not in (200, 416):
        return ["many_ranges: expected 200 (whole file) or 416, got %s" % status]
    if b"multipart" in answer[:2000].lower():
        return ["many_ranges: answered with a multipart body"]
    if time.monotonic() - start > 10:
        return ["many_ranges: took %.1f s" % (time.monotonic() - start)]
    return []


def check_chunk_extension(server):
    """400 for the extension, and none of it buffered: the server's peak RSS grows by
    less than 8 MiB while 64 MiB go by (after the 400 the connection lingers, discarding
    input, until the client stops)."""
    before = server.rss_kb()
    server.reset_peak()
    stop, stats, thread = attacks.run_in_thread(attacks.chunk_extension_64mib, server)
    thread.join(60)
    stop.set()
    answer = stats.get("answer", b"")
    problems = []
    if A.status_of(answer) != 400:
        problems.append("chunk_extension_64mib: expected 400, got %r" % answer[:100])
    growth = server.peak_rss_kb() - before
    if growth > 8 * 1024:
        problems.append("chunk_extension_64mib: peak RSS grew by %d KiB" % growth)
    return problems


def check_log_escaping(server):
    hostile = b"\"evil\x1b[31m\x7f\xc3\xa9\x01"
    A.http1_exchange(server.port, b"GET /index.html?q=" + b"%22" + b" HTTP/1.1\r\n" + HOST +
                     b"User-Agent: " + hostile + b"\r\nReferer: " + hostile +
                     b"\r\nConnection: close\r\n\r\n")
    # The same through SPDY, whose header values may hold any byte but NUL.
    s = A.attacker_socket(server.port)
    d = A.Deflater()
    A.send_all(s, A.syn_stream(d, 1, A.request_headers("/index.html", extra=[
        ("user-agent", hostile + b"\n" + b"127.0.0.1 - - [forged]"), ("referer", hostile)])))
    A.wait_closed(s, 1.0)
    s.close()
    time.sleep(0.3)
    with open(server.access_log, "rb") as f:
        log = f.read()
    problems = []
    lines = log.split(b"\n")
    if len([line for line in lines if line]) < 2:
        problems.append("log_escaping: expected 2 access log lines, got %r" % log[-400:])
    for byte in (b"\x1b", b"\x7f", b"\xc3", b"\x01"):
        if byte in log:
            problems.append("log_escaping: raw byte %r reached the access log" % byte)
    if b"[forged]" in log and any(line.startswith(b"127.0.0.1 - - [forged]") for line in lines):
        problems.append("log_escaping: a forged line was injected")
    if b"\"evil" in log.replace(b"\\\"evil", b""):
        problems.append("log_escaping: an unescaped quote reached the access log")
    return problems


def run_group(args, group):
    problems = []
    if group == "http1":
        server = A.Server(args.speedyd)
        try:
            for check in (check_smuggling, check_empty_values, check_many_ranges,
                          check_chunk_extension, check_log_escaping):
                if args.only and args.only != check.__name__[6:]:
                    continue
                found = check(server)
                print("%-26s %s" % (check.__name__[6:], "FAIL" if found else "ok"), flush=True)
                problems += found
            if not server.alive():
                problems.append("http1: speedyd died")
        finally:
            server.stop()
            if "runtime error" in server.stderr_text or "AddressSanitizer" in server.stderr_text:
                problems.append("http1: sanitizer report:\n" + server.stderr_text[-4000:])
    elif group == "budget_tls":
        problems += check_memory_budget(args)
        problems += check_tls(args)
    return problems


def check_memory_budget(args):
    """A small --max-memory: connections that pile up streams they never read push the
    server over 3/4 of its budget; new streams are then refused (REFUSED_STREAM) and
    HTTP/1.1 requests get 503, the process lives on and serves again afterwards."""
    # The idle timeout is what frees connections whose peers vanished without reading
    # (nothing moves on them); short here so that service returns within the test.
    server = A.Server(args.speedyd, ["--max-memory", str(1 << 20),
                                     "--max-connection-memory", str(2 << 20),
                                     "--idle-timeout", "1500"])
    problems = []
    socks = []
    refused = 0
    lock = threading.Lock()
    stop = threading.Event()

    def attack():
        # Keeps re-creating the pressure: connections that pile up streams they never read.
        # (The server ends sessions past the budget, so pressure comes and goes.)
        while not stop.is_set():
            s = A.attacker_socket(server.port)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            d = A.Deflater()
            big = [("x-fill-%d" % i, "f" * 200) for i in range(100)]
            try:
                A.send_all(s, b"".join(A.syn_stream(d, 2 * i + 1,
                                                    A.request_headers("/big.bin", extra=big))
                                       for i in range(100)))
            except OSError:
                pass
            with lock:
                socks.append(s)
                if len(socks) >= 120:
                    break
            time.sleep(0.02)

    try:
        attacker = threading.Thread(target=attack, daemon=True)
        attacker.start()
        # The server reaches the pressure mark only while it holds the piled-up streams;
        # probe until it answers 503 (at most ~6 s).
        h1_status = None
        for _ in range(30):
            time.sleep(0.2)
            answer = A.http1_exchange(server.port,
                                      b"GET /index.html HTTP/1.1\r\n" + HOST + b"\r\n", read_s=3)
            h1_status = A.status_of(answer)
            if h1_status == 503:
                break
        stop.set()
        attacker.join(timeout=10)
        with lock:
            held = list(socks)
        for s in held:
            raw, _ = A.drain(s)
            frames, _ = A.parse_frames(raw)
            for is_ctrl, ftype, _f, payload in frames:
                if is_ctrl and ftype == A.RST_STREAM and struct.unpack(">I", payload[4:8])[0] == 3:
                    refused += 1
        print("memory_budget              refused streams %d, HTTP/1.1 answer %s" %
              (refused, h1_status), flush=True)
        if refused == 0:
            problems.append("memory_budget: no stream was refused past the budget")
        if h1_status != 503:
            problems.append("memory_budget: expected 503 for HTTP/1.1 under pressure, got %s" %
                            h1_status)
        if not server.alive():
            problems.append("memory_budget: speedyd died")
    finally:
        for s in socks:
            s.close()
    try:
        url = "http://127.0.0.1:%d/index.html" % server.port
        end = time.monotonic() + 10
        while True:
            ok, _, err = A.legit_get(args.speedy, url)
            if ok or time.monotonic() > end:
                break
            time.sleep(0.5)
        if not ok:
            problems.append("memory_budget: no service once the attackers left: %s" % err)
    finally:
        server.stop()
    return problems


def check_tls(args):
    """TLS 1.2 offers only ECDHE + AEAD; RSA key exchange and CBC suites fail; TLS 1.1
    fails; session tickets resume; and the legitimate client works over TLS."""
    import ssl
    server = A.Server(args.speedyd, tls=True)
    problems = []

    contexts = {}

    def handshake(ciphers=None, version=ssl.TLSVersion.TLSv1_2, session=None):
        # One context per setting: a session resumes only through the context it came from.
        key = (ciphers, version)
        if key in contexts:
            return _handshake_with(contexts[key], session)
        ctx = contexts[key] = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.minimum_version = version
        ctx.maximum_version = version
        if ciphers:
            ctx.set_ciphers(ciphers)
        return _handshake_with(ctx, session)

    def _handshake_with(ctx, session):
        raw = socket.create_connection(("127.0.0.1", server.tls_port), timeout=5)
        try:
            tls = ctx.wrap_socket(raw, session=session)
            tls.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            while tls.recv(65536):
                pass
            result = (tls.cipher()[0], tls.session, tls.session_reused)
            tls.close()
            return result
        except (ssl.SSLError, OSError):
            raw.close()
            return None

    try:
        good = handshake("ECDHE-ECDSA-AES128-GCM-SHA256")
        if good is None:
            problems.append("tls: ECDHE-ECDSA-AES128-GCM-SHA256 over TLS 1.2 failed")
        for weak in ("ECDHE-ECDSA-AES128-SHA", "AES128-GCM-SHA256", "AES256-SHA256"):
            try:
                if handshake(weak) is not None:
                    problems.append("tls: the weak suite %s was accepted" % weak)
            except ssl.SSLError:
                pass  # this OpenSSL has no such suite at all: nothing to prove
        try:
            if handshake(version=ssl.TLSVersion.TLSv1_1) is not None:
                problems.append("tls: TLS 1.1 was accepted")
        except (ssl.SSLError, ValueError):
            pass
        if good is not None:
            again = handshake("ECDHE-ECDSA-AES128-GCM-SHA256", session=good[1])
            if again is None or not again[2]:
                problems.append("tls: a session ticket did not resume the session")
        ok, _, err = A.legit_get(args.speedy, "https://127.0.0.1:%d/index.html" % server.tls_port,
                                 insecure=True)
        if not ok:
            problems.append("tls: speedy get over TLS failed: %s" % err.strip())
        print("%-26s %s" % ("tls_hardening", "FAIL" if problems else "ok"), flush=True)
    finally:
        server.stop()
    return problems
