"""h2_client.py — an HTTP/2 client built on python-h2 (a peer we did not write), for speedyd.

  /usr/bin/python3 h2_client.py PORT SITE_DIR fetch|push|hints|uploads|cut|shutdown [SERVER_PID]

Cleartext with prior knowledge (RFC 9113 3.3): the client preface, then requests. Every
check prints "ok: WHAT" or "FAIL: WHAT: got X, expected Y"; the exit status is the
number of failures (0: all passed). Each scenario is bounded by a 20 s deadline.

fetch     0 B, 1 KiB and 3 MiB downloads (sha256 against SITE_DIR), 100 streams at once
          on the connection, a POST upload echoed back (one ended by trailers), HEAD
          (Content-Length, no DATA; an error answer to HEAD without content too),
          a Range (206), If-None-Match (304).
push      GET / with push enabled: the manifest's six PUSH_PROMISEs (RFC 9113 8.4), each
          pushed body equal to its file, all promised before the page's response ends.
hints     GET / with SETTINGS_ENABLE_PUSH 0: no push, a 103 (RFC 8297) whose Link names
          the manifest's resources, and the same Link on the 200.
uploads   three 600,000-octet POST uploads at once on one connection, against a server that
          may hold 1 MiB of echoed bodies per connection (--upload-max 700000,
          --max-connection-memory 1048576): at least one is refused with 503 before its
          end, the others come back intact, the connection lives on, and one more upload
          afterwards is echoed (what the refused and finished ones held was given back).
cut       GET /large.bin, then the connection closed after 64 KiB (the access log's line).
shutdown  GET /large.bin while holding the windows shut, SIGTERM to SERVER_PID: a GOAWAY
          with NO_ERROR arrives (RFC 9113 6.8), then the whole body once we open the
          windows (frames by hand with hyperframe and hpack: python-h2 ends the
          connection at a GOAWAY).
"""
import gzip
import hashlib
import os
import signal
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import hpack
import hyperframe.frame

DEADLINE_S = 20.0
FAILS = 0


def check(what, got, expected):
    global FAILS
    if got == expected:
        print("ok: %s" % what)
    else:
        FAILS += 1
        print("FAIL: %s: got %r, expected %r" % (what, got, expected))


def sha_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Client:
    def __init__(self, port, enable_push=True):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
        # Strict: every header we receive is checked against RFC 9113 8.2 and 8.3.
        config = h2.config.H2Configuration(client_side=True, validate_inbound_headers=True,
                                           normalize_inbound_headers=False)
        self.conn = h2.connection.H2Connection(config=config)
        # In the SETTINGS of the preface (3.4): the server knows before our first request.
        self.conn.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.ENABLE_PUSH: int(enable_push)})
        self.conn.initiate_connection()
        self.streams = {}  # id -> dict(headers, informational, body, ended, pushes)
        self.goaway = None
        self.closed = False
        self.flush()

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, method, path, headers=(), body=None):
        sid = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":scheme", "http"),
                  (":authority", "127.0.0.1:%d" % self.port), (":path", path)]
        fields += list(headers)
        self.streams[sid] = {"headers": None, "informational": [], "body": bytearray(),
                             "ended": False, "reset": None, "promised": [],
                             "ended_at": None}
        self.conn.send_headers(sid, fields, end_stream=body is None)
        if body is not None:
            self.send_body(sid, body)
        self.flush()
        return sid

    def send_body(self, sid, body):
        offset = 0
        while offset < len(body):
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room <= 0:
                self.pump(lambda: self.conn.local_flow_control_window(sid) > 0)
                continue
            chunk = body[offset:offset + room]
            self.conn.send_data(sid, chunk)
            offset += len(chunk)
            self.flush()
        self.conn.end_stream(sid)
        self.flush()

    def stream(self, sid):
        if sid not in self.streams:
            self.streams[sid] = {"headers": None, "informational": [], "body": bytearray(),
                                 "ended": False, "reset": None, "promised": [],
                                 "ended_at": None}
        return self.streams[sid]

    def handle(self, event):
        if isinstance(event, h2.events.ResponseReceived):
            self.stream(event.stream_id)["headers"] = dict(event.headers)
        elif isinstance(event, h2.events.InformationalResponseReceived):
            self.stream(event.stream_id)["informational"].append(dict(event.headers))
        elif isinstance(event, h2.events.DataReceived):
            self.stream(event.stream_id)["body"] += event.data
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            s = self.stream(event.stream_id)
            s["ended"] = True
            s["ended_at"] = time.monotonic()
        elif isinstance(event, h2.events.StreamReset):
            self.stream(event.stream_id)["reset"] = event.error_code
        elif isinstance(event, h2.events.PushedStreamReceived):
            pushed = self.stream(event.pushed_stream_id)
            pushed["request"] = dict(event.headers)
            pushed["promised_at"] = time.monotonic()
            self.stream(event.parent_stream_id)["promised"].append(event.pushed_stream_id)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event

    def pump(self, done):
        deadline = time.monotonic() + DEADLINE_S
        while not done():
            if self.closed or time.monotonic() > deadline:
                return False
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return False
            if not data:
                self.closed = True
                return done()
            for event in self.conn.receive_data(data):
                self.handle(event)
            self.flush()
        return True

    def wait(self, *sids):
        return self.pump(lambda: all(self.streams[s]["ended"] or self.streams[s]["reset"] is not None
                                     for s in sids))


def header(s, name):
    value = (s["headers"] or {}).get(name.encode())
    return value.decode() if value is not None else None


def fetch(port, site):
    c = Client(port)
    files = {"/empty.bin": "empty.bin", "/kib.bin": "kib.bin", "/large.bin": "large.bin"}
    sids = {p: c.request("GET", p) for p in files}
    check("three downloads complete", c.wait(*sids.values()), True)
    for p, f in files.items():
        s = c.streams[sids[p]]
        check("GET %s status" % p, header(s, ":status"), "200")
        check("GET %s sha256" % p, hashlib.sha256(s["body"]).hexdigest(),
              sha_file(os.path.join(site, f)))
    # 100 streams at once (speedyd's SETTINGS_MAX_CONCURRENT_STREAMS is 100).
    check("server allows 100 concurrent streams",
          c.conn.remote_settings.max_concurrent_streams >= 100, True)
    many = [c.request("GET", "/kib.bin") for _ in range(100)]
    check("100 concurrent streams complete", c.wait(*many), True)
    want = sha_file(os.path.join(site, "kib.bin"))
    check("100 concurrent streams: all 200 with the right body",
          sum(1 for s in many if header(c.streams[s], ":status") == "200"
              and hashlib.sha256(c.streams[s]["body"]).hexdigest() == want), 100)
    upload = os.urandom(200000)
    sid = c.request("POST", "/upload", [("content-length", str(len(upload)))], body=upload)
    check("POST upload completes", c.wait(sid), True)
    check("POST upload status", header(c.streams[sid], ":status"), "200")
    check("POST upload echoed intact", hashlib.sha256(c.streams[sid]["body"]).hexdigest(),
          hashlib.sha256(upload).hexdigest())
    # An upload whose body ends with trailers (RFC 9113 8.1) is answered like any other.
    sid = c.conn.get_next_available_stream_id()
    c.stream(sid)
    c.conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"),
                              (":authority", "127.0.0.1:%d" % port), (":path", "/upload"),
                              ("content-length", "5")])
    c.conn.send_data(sid, b"hello")
    c.conn.send_headers(sid, [("x-checksum", "5")], end_stream=True)
    c.flush()
    check("POST upload ended by trailers completes", c.wait(sid), True)
    check("POST upload ended by trailers: 200 and the body",
          (header(c.streams[sid], ":status"), bytes(c.streams[sid]["body"])), ("200", b"hello"))
    # A body no upload takes is dropped up to 1 MiB, then the stream is reset (CANCEL).
    sid = c.conn.get_next_available_stream_id()
    c.stream(sid)
    c.conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"),
                              (":authority", "127.0.0.1:%d" % port), (":path", "/kib.bin")])
    c.flush()
    send_part(c, sid, bytes(3 << 20), past_the_answer=True)
    c.pump(lambda: c.streams[sid]["reset"] is not None)
    check("a 3 MiB body to a file: 405, then the stream reset with CANCEL",
          (header(c.streams[sid], ":status"), c.streams[sid]["reset"]), ("405", 8))
    # HEAD gets no content, whoever makes the answer (here the upload path's 405).
    sid = c.request("HEAD", "/upload")
    c.wait(sid)
    check("HEAD /upload: 405 without content and without a reset",
          (header(c.streams[sid], ":status"), len(c.streams[sid]["body"]), c.streams[sid]["reset"]),
          ("405", 0, None))
    sid = c.request("HEAD", "/kib.bin")
    c.wait(sid)
    check("HEAD status", header(c.streams[sid], ":status"), "200")
    check("HEAD content-length", header(c.streams[sid], "content-length"), "1024")
    check("HEAD has no body", len(c.streams[sid]["body"]), 0)
    sid = c.request("GET", "/large.bin", [("range", "bytes=1000-1999")])
    c.wait(sid)
    with open(os.path.join(site, "large.bin"), "rb") as f:
        f.seek(1000)
        part = f.read(1000)
    check("Range status", header(c.streams[sid], ":status"), "206")
    check("Range body", bytes(c.streams[sid]["body"]) == part, True)
    sid = c.request("GET", "/kib.bin")
    c.wait(sid)
    etag = header(c.streams[sid], "etag")
    check("ETag present", etag is not None, True)
    sid = c.request("GET", "/kib.bin", [("if-none-match", etag or '"x"')])
    c.wait(sid)
    check("If-None-Match answered 304", header(c.streams[sid], ":status"), "304")
    check("304 has no body", len(c.streams[sid]["body"]), 0)
    check("no GOAWAY during the session", c.goaway, None)


def send_part(c, sid, data, past_the_answer=False):
    """Sends data on sid as the windows allow; stops early when the stream has ended (a
    server that answered before the end of the upload; past_the_answer: only when it was
    reset)."""
    s = c.streams[sid]
    offset = 0
    while offset < len(data) and (past_the_answer or not s["ended"]) and s["reset"] is None:
        try:
            room = min(c.conn.local_flow_control_window(sid), c.conn.max_outbound_frame_size)
            if room <= 0:
                if not c.pump(lambda: (s["ended"] and not past_the_answer) or
                              s["reset"] is not None or
                              c.conn.local_flow_control_window(sid) > 0):
                    return
                continue
            c.conn.send_data(sid, data[offset:offset + room])
        except h2.exceptions.StreamClosedError:
            return
        offset += room
        c.flush()


def uploads(port, site):
    c = Client(port)
    size, piece = 600000, 100000
    bodies = [os.urandom(size) for _ in range(3)]
    sids = []
    for _ in bodies:
        sid = c.conn.get_next_available_stream_id()
        c.stream(sid)
        c.conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"),
                                  (":authority", "127.0.0.1:%d" % port), (":path", "/upload"),
                                  ("content-length", str(size))])
        sids.append(sid)
    c.flush()
    for offset in range(0, size, piece):  # every upload under way before any ends
        for sid, body in zip(sids, bodies):
            send_part(c, sid, body[offset:offset + piece])
    for sid in sids:
        s = c.streams[sid]
        if not s["ended"] and s["reset"] is None:
            try:
                c.conn.end_stream(sid)
            except h2.exceptions.StreamClosedError:
                pass
    c.flush()
    check("three uploads answered", c.wait(*sids), True)
    statuses = [header(c.streams[s], ":status") for s in sids]
    check("at least one upload refused with 503 (statuses %s)" % statuses, "503" in statuses, True)
    check("the others echoed intact",
          all(hashlib.sha256(c.streams[s]["body"]).hexdigest() == hashlib.sha256(b).hexdigest()
              for s, b in zip(sids, bodies) if header(c.streams[s], ":status") == "200"), True)
    upload = os.urandom(size)
    sid = c.request("POST", "/upload", [("content-length", str(size))], body=upload)
    check("one more upload afterwards completes", c.wait(sid), True)
    check("one more upload afterwards: 200", header(c.streams[sid], ":status"), "200")
    check("one more upload afterwards echoed intact",
          hashlib.sha256(c.streams[sid]["body"]).hexdigest(), hashlib.sha256(upload).hexdigest())
    check("no GOAWAY during the session", c.goaway, None)


def cut(port, site):
    """GET /large.bin, 64 KiB of it read, then the connection closed: the server's access
    log must still have the line (the shell test checks it)."""
    c = Client(port)
    sid = c.request("GET", "/large.bin")
    check("part of the body came", c.pump(lambda: len(c.streams[sid]["body"]) >= 65536), True)
    c.sock.close()


def push(port, site):
    c = Client(port, enable_push=True)
    page = c.request("GET", "/", [("accept-encoding", "gzip")])
    c.wait(page)
    promised = c.streams[page]["promised"]
    check("six PUSH_PROMISEs on the page's stream", len(promised), 6)
    c.wait(*promised)
    by_path = {c.streams[p]["request"][b":path"].decode(): c.streams[p] for p in promised}
    css = by_path.get("/css/site.css")
    check("pushed /css/site.css", css is not None, True)
    if css is not None:
        check("pushed /css/site.css status", header(css, ":status"), "200")
        body = bytes(css["body"])
        if header(css, "content-encoding") == "gzip":
            body = gzip.decompress(body)
        check("pushed /css/site.css intact", hashlib.sha256(body).hexdigest(),
              sha_file(os.path.join(site, "css", "site.css")))
        check("promised request is a GET", css["request"].get(b":method"), b"GET")
        # RFC 9111 4.1: the pushed answer varies on Accept-Encoding; the promise says which.
        if header(css, "vary") is not None:
            check("the promise carries the page's accept-encoding",
                  css["request"].get(b"accept-encoding"), b"gzip")
    check("every promise came before the page ended",
          all(c.streams[p]["promised_at"] <= c.streams[page]["ended_at"] for p in promised), True)
    check("no 103 when pushing", c.streams[page]["informational"], [])


def hints(port, site):
    c = Client(port, enable_push=False)
    page = c.request("GET", "/")
    check("page completes", c.wait(page), True)
    s = c.streams[page]
    check("no push to a client that disabled it", s["promised"], [])
    check("one informational response", len(s["informational"]), 1)
    if s["informational"]:
        info = s["informational"][0]
        check("informational status is 103", info.get(b":status"), b"103")
        link = (info.get(b"link") or b"").decode()
        check("103 Link preloads /css/site.css", "</css/site.css>; rel=preload" in link, True)
        check("the 200 carries the same Link", header(s, "link"), link)
    check("final status", header(s, ":status"), "200")


def read_frame(sock, buf):
    """Reads one whole frame (RFC 9113 4.1): returns (frame, rest of buf), or None at EOF."""
    while True:
        if len(buf) >= 9:
            frame, length = hyperframe.frame.Frame.parse_frame_header(memoryview(buf[:9]))
            if len(buf) >= 9 + length:
                frame.parse_body(memoryview(buf[9:9 + length]))
                return frame, buf[9 + length:]
        data = sock.recv(65536)
        if not data:
            return None
        buf += data


def shutdown(port, site, pid):
    # python-h2 takes a GOAWAY as the end of the connection and refuses what follows, but
    # RFC 9113 6.8 lets streams at or below its last stream id finish: frames by hand
    # (hyperframe, hpack) here.
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
    encoder = hpack.Encoder()
    out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + hyperframe.frame.SettingsFrame(0).serialize()
    headers = hyperframe.frame.HeadersFrame(1)
    headers.flags.add("END_HEADERS")
    headers.flags.add("END_STREAM")
    headers.data = encoder.encode([(":method", "GET"), (":scheme", "http"),
                                   (":authority", "127.0.0.1:%d" % port), (":path", "/large.bin")])
    sock.sendall(out + headers.serialize())
    body = bytearray()
    status = None
    goaways = []
    ended = False
    killed = False
    buf = b""
    decoder = hpack.Decoder()
    deadline = time.monotonic() + DEADLINE_S
    while not ended and time.monotonic() < deadline:
        if not killed and len(body) >= 65535:
            # Both windows (65,535) are used up: the response waits for us. Stop the server.
            check("response in flight before SIGTERM", ended, False)
            os.kill(pid, signal.SIGTERM)
            killed = True
        got = read_frame(sock, buf)
        if got is None:
            break
        frame, buf = got
        if isinstance(frame, hyperframe.frame.SettingsFrame) and "ACK" not in frame.flags:
            sock.sendall(hyperframe.frame.SettingsFrame(0, flags=["ACK"]).serialize())
        elif isinstance(frame, hyperframe.frame.PingFrame) and "ACK" not in frame.flags:
            sock.sendall(hyperframe.frame.PingFrame(0, opaque_data=frame.opaque_data,
                                                    flags=["ACK"]).serialize())
        elif isinstance(frame, hyperframe.frame.HeadersFrame) and frame.stream_id == 1:
            status = dict(decoder.decode(frame.data)).get(":status")
            ended = "END_STREAM" in frame.flags
        elif isinstance(frame, hyperframe.frame.DataFrame) and frame.stream_id == 1:
            body += frame.data
            ended = "END_STREAM" in frame.flags
        elif isinstance(frame, hyperframe.frame.GoAwayFrame):
            goaways.append(frame)
            if len(goaways) == 1 and killed:
                # Open both windows: the in-flight response may now complete.
                for sid in (0, 1):
                    sock.sendall(hyperframe.frame.WindowUpdateFrame(
                        sid, window_increment=16 * 1024 * 1024).serialize())
        elif isinstance(frame, hyperframe.frame.RstStreamFrame):
            check("no RST_STREAM", frame.error_code, None)
            break
    check("GOAWAY received after SIGTERM", len(goaways) >= 1 and killed, True)
    if goaways:
        check("GOAWAY is NO_ERROR", goaways[0].error_code, 0)
        check("GOAWAY keeps our stream", goaways[0].last_stream_id >= 1, True)
    check("in-flight response status", status, "200")
    check("in-flight response completes after the GOAWAY", ended, True)
    check("in-flight response intact", hashlib.sha256(body).hexdigest(),
          sha_file(os.path.join(site, "large.bin")))
    sock.close()


def main():
    port, site, scenario = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    if scenario == "fetch":
        fetch(port, site)
    elif scenario == "push":
        push(port, site)
    elif scenario == "hints":
        hints(port, site)
    elif scenario == "uploads":
        uploads(port, site)
    elif scenario == "cut":
        cut(port, site)
    elif scenario == "shutdown":
        shutdown(port, site, int(sys.argv[4]))
    else:
        print("usage: h2_client.py PORT SITE fetch|push|hints|uploads|cut|shutdown [PID]")
        return 2
    return min(FAILS, 100)


if __name__ == "__main__":
    sys.exit(main())
