"""client.py — strict_spdy.py client: one session that sends the --get and --post
requests concurrently, checks each answer (headers, status, body, pushes) and writes the
report (JSON and the summary on stderr).
"""
import hashlib
import json
import re
import select
import socket
import ssl
import sys
import time
import zlib

from .session import Session, Transport, check_header_names, summarize
from .wire import (
    ALPN_IDS, DEFAULT_WINDOW, FLAG_UNIDIRECTIONAL, GOAWAY_OK, RST_CANCEL,
    SETTINGS_INITIAL_WINDOW_SIZE)


class ClientSession(Session):
    def __init__(self, transport, opts, scheme, authority):
        super().__init__("client", opts.version, transport, opts)
        self.scheme = scheme
        self.authority = authority
        self.requests = []

    def start(self):
        v3 = self.version != "2"
        if self.opts.window:
            self.send_settings([(SETTINGS_INITIAL_WINDOW_SIZE, self.opts.window)])
        if self.session_flow and self.session_recv_initial > DEFAULT_WINDOW:
            self.send_window_update(0, self.session_recv_initial - DEFAULT_WINDOW)
            self.session_recv_window = self.session_recv_initial
        for method, path, body in self.opts.operations:
            if v3:
                headers = [(":method", method), (":path", path), (":version", "HTTP/1.1"),
                           (":host", self.authority), (":scheme", self.scheme)]
            else:
                headers = [("method", method), ("url", path), ("version", "HTTP/1.1"),
                           ("host", self.authority), ("scheme", self.scheme)]
            headers += [("user-agent", "strict-spdy/1"), ("accept", "*/*")]
            if body is not None:
                headers += [("content-type", "application/octet-stream"),
                            ("content-length", str(len(body)))]
            # SPDY/3 3.2.1: a request without a body sets FLAG_FIN on its SYN_STREAM.
            stream = self.open_stream(headers, fin=not body)
            stream.path, stream.method = path, method
            stream.keep_body = self.opts.keep_bodies
            if body:
                stream.to_send = body
                stream.fin_after_body = True
            self.requests.append(stream)

    def check_response_headers(self, stream):
        h = stream.response_headers
        if self.version == "2":
            check_header_names(self, stream, h, ("status", "version"), (), "SYN_REPLY")
            status = h.get("status", "")
        else:
            check_header_names(self, stream, h, (":status", ":version"), (":status", ":version"),
                               "SYN_REPLY")
            status = h.get(":status", "")
        if not re.match(r"^[1-5][0-9][0-9]( |$)", status):
            self.violation("status %r is not a three-digit code" % status, stream)
        enc = h.get("content-encoding", "")
        if enc in ("gzip", "deflate"):
            stream.keep_body = True   # SPDY/3 3.2.1: a client must accept gzip regardless

    def on_push(self, stream, flags, assoc, headers):
        stream.pushed = True
        h = dict(headers)
        if not flags & FLAG_UNIDIRECTIONAL:
            self.violation("pushed SYN_STREAM without FLAG_UNIDIRECTIONAL", stream)
        if assoc == 0 or assoc not in self.streams or self.streams[assoc].remote_fin:
            self.violation("pushed SYN_STREAM associated to stream %d, not an open stream "
                           "of ours" % assoc, stream)
        need = ("url",) if self.version == "2" else (":host", ":scheme", ":path")
        for name in need:
            if name not in h:
                self.violation("pushed SYN_STREAM without %r" % name, stream)
        self.note("push on stream %d (%s) refused with CANCEL" % (
            stream.id, h.get("url") or h.get(":path")))
        self.send_rst(stream, RST_CANCEL)

    def on_stream_reset(self, stream, status):
        if stream.pushed:
            return
        stream.error = "reset: %s" % stream.reset
        self.fail("%s %s" % (self.stream_label(stream), stream.error))

    def on_stream_end(self, stream):
        if stream.local_fin and stream.recv_unacked:
            stream.recv_unacked = 0  # no WINDOW_UPDATE after the FIN (SPDY/3 2.6.8)

    def finished(self):
        return all(s.closed or s.error for s in self.requests)

    def pending_work(self):
        return not self.finished()

    def stream_summary(self, stream):
        h = stream.response_headers
        status = h.get("status" if self.version == "2" else ":status", "")
        body_hash = stream.hash.hexdigest()
        decoded_len = stream.received
        enc = h.get("content-encoding", "")
        if enc in ("gzip", "deflate") and stream.remote_fin:
            try:
                wbits = 31 if enc == "gzip" else 15
                decoded = zlib.decompress(bytes(stream.body), wbits)
            except zlib.error:
                decoded = zlib.decompress(bytes(stream.body), -15)
            body_hash = hashlib.sha256(decoded).hexdigest()
            decoded_len = len(decoded)
        summary = {"path": stream.path, "method": stream.method, "stream_id": stream.id,
                   "status": int(status[:3]) if status[:3].isdigit() else None,
                   "bytes": decoded_len, "wire_bytes": stream.received, "sha256": body_hash,
                   "data_frames": stream.data_frames,
                   "complete": stream.remote_fin and stream.reset is None,
                   "error": stream.error, "headers": h}
        if stream.keep_body and 0 < stream.received <= self.opts.show_body_max:
            summary["body"] = bytes(stream.body).decode("latin-1")
        cl = h.get("content-length")
        if cl is not None and stream.remote_fin and stream.reset is None:
            if not cl.isdigit() or int(cl) != stream.received:
                self.violation("content-length %s but %d bytes of DATA arrived" % (
                    cl, stream.received),
                               stream)
        return summary


def run_client(opts):
    host, _, port = opts.connect.rpartition(":")
    t_start = time.monotonic()
    report = {"ok": False, "role": "client", "version": opts.version, "tls": opts.tls,
              "connect": opts.connect}
    session = None
    try:
        raw = socket.create_connection((host, int(port)), timeout=opts.connect_timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock = raw
        if opts.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            if opts.ca:
                ctx.load_verify_locations(opts.ca)
            else:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols([ALPN_IDS[opts.version]])
            sock = ctx.wrap_socket(raw, server_hostname=opts.servername or host)
            report["alpn"] = sock.selected_alpn_protocol()
            report["tls_version"] = sock.version()
            if report["alpn"] != ALPN_IDS[opts.version]:
                raise ConnectionError("ALPN: the server chose %r, we offered only %r" % (
                    report["alpn"], ALPN_IDS[opts.version]))
    except (OSError, ssl.SSLError, ConnectionError) as e:
        report["failures"] = ["connect/handshake to %s: %s" % (opts.connect, e)]
        return finish_report(opts, report)
    scheme = "https" if opts.tls else "http"
    authority = opts.host or opts.connect
    session = ClientSession(Transport(sock), opts, scheme, authority)
    session.start()
    linger_until = None
    deadline = t_start + opts.timeout
    last_data, longest_silence = time.monotonic(), (0.0, 0.0)  # (seconds, when)
    while True:
        now = time.monotonic()
        if not session.closing:
            session.send_due_updates()
        session.produce_data()
        if session.closing and not session.t.out:
            break
        if session.finished() and linger_until is None:
            # All answered: say goodbye (SPDY/3.1 2.1: GOAWAY before closing), then
            # keep reading a moment so late frames are still judged.
            session.pending_updates = []   # nothing more to receive
            session.send_goaway(GOAWAY_OK)
            linger_until = now + opts.linger
        lingered = linger_until is not None and (now >= linger_until or session.t.eof)
        if lingered and not session.t.out:
            break
        if session.t.eof and linger_until is None:
            session.fail("the server closed the connection with %d stream(s) unfinished%s\n%s" % (
                sum(1 for s in session.requests if not s.closed),
                " (%s)" % session.t.error if session.t.error else "", session.diagnostics()))
            break
        if now >= deadline:
            session.fail("no result within --timeout %.1f s\n%s" % (
                opts.timeout, session.diagnostics()))
            break
        if linger_until is None and now - session.t.last_io >= opts.stall:
            session.fail("stalled: no byte moved for %.1f s with %d stream(s) unfinished\n%s" % (
                now - session.t.last_io, sum(1 for s in session.requests if not s.closed),
                session.diagnostics()))
            break
        rlist = [] if session.t.eof else [session.t]
        wlist = [session.t] if session.t.out else []
        if not rlist and not wlist:
            break
        try:
            wait = 0.005 if session.pending_updates else 0.05
            readable, writable, _ = select.select(rlist, wlist, [], wait)
        except (OSError, ValueError):
            break
        if writable:
            session.t.flush()
            session.on_written()
        if readable:
            data = session.t.read()
            if data and linger_until is None:
                # The longest the peer kept us waiting mid-exchange: not a stall, but
                # worth seeing (a server unsure of our version may pause).
                now = time.monotonic()
                if now - last_data > longest_silence[0]:
                    longest_silence = (now - last_data, last_data - session.t0)
                last_data = now
            session.feed(data)
    session.t.close()
    if longest_silence[0] >= opts.silence_note:
        session.note("the peer sent nothing for %.3f s from %.3fs with streams unfinished"
                     % longest_silence)
    report.update({
        "streams": [session.stream_summary(s) for s in session.requests],
        "violations": session.violations, "failures": session.failures, "notes": session.notes,
        "settings_received": session.settings_received, "goaway_received": session.goaway_received,
        "elapsed_s": round(time.monotonic() - t_start, 3),
        "longest_silence_s": round(longest_silence[0], 3)})
    report.update(session.trace())
    report.update(session.counts())
    return finish_report(opts, report)


def finish_report(opts, report):
    report.setdefault("violations", [])
    report.setdefault("failures", [])
    streams = report.get("streams", [])
    incomplete = [s["path"] for s in streams if not s["complete"]]
    report["ok"] = not report["violations"] and not report["failures"] and not incomplete
    text = json.dumps(report, indent=1, sort_keys=True)
    if opts.json == "-":
        print(text)
    elif opts.json:
        with open(opts.json, "w") as f:
            f.write(text + "\n")
    summarize(report, sys.stderr)
    return 0 if report["ok"] else 1
