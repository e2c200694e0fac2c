"""server.py — strict_spdy.py server: listens on 127.0.0.1, serves files from the
docroot (GET) and digests uploads (POST), one strict session per connection, and reports
each session when it ends (JSON line and the summary on stderr).
"""
import json
import os
import re
import select
import socket
import ssl
import sys
import time

from .session import Session, Transport, check_header_names, summarize
from .wire import (
    ALPN_IDS, DEFAULT_WINDOW, FLAG_UNIDIRECTIONAL, SETTINGS_INITIAL_WINDOW_SIZE,
    SETTINGS_MAX_CONCURRENT_STREAMS)


class ServerSession(Session):
    def __init__(self, transport, opts, peer, number):
        super().__init__("server", opts.version, transport, opts, flow_as=opts.flow_as)
        self.peer = peer
        self.number = number
        self.requests = []
        self.concurrent = 0
        self.ended_at = None

    def start(self):
        entries = []
        if self.opts.max_streams is not None:
            entries.append((SETTINGS_MAX_CONCURRENT_STREAMS, self.opts.max_streams))
        if self.opts.window:
            entries.append((SETTINGS_INITIAL_WINDOW_SIZE, self.opts.window))
        if entries:
            self.send_settings(entries)
        if self.session_flow and self.session_recv_initial > DEFAULT_WINDOW:
            self.send_window_update(0, self.session_recv_initial - DEFAULT_WINDOW)
            self.session_recv_window = self.session_recv_initial

    def on_request(self, stream, flags, assoc, headers):
        h = stream.request_headers
        if assoc:
            self.violation("client SYN_STREAM associated to stream %d" % assoc, stream)
        if flags & FLAG_UNIDIRECTIONAL:
            self.violation("client SYN_STREAM with FLAG_UNIDIRECTIONAL", stream)
        open_now = sum(1 for s in self.streams.values() if s.id % 2 == 1 and not s.closed)
        self.max_concurrent_seen = max(self.max_concurrent_seen, open_now)
        if self.version == "2":
            required = ("method", "url", "version", "scheme")
            check_header_names(self, stream, h, required, (), "SYN_STREAM")
            method, path = h.get("method", ""), h.get("url", "")
            m = re.match(r"^[a-z]+://[^/]*(/.*)$", path)  # draft 2 allows an absolute URL
            if m:
                path = m.group(1)
        else:
            required = (":method", ":path", ":version", ":host", ":scheme")
            check_header_names(self, stream, h, required, required, "SYN_STREAM")
            if "host" in h:
                self.violation("SYN_STREAM carries 'host' (SPDY/3 3.2.1: not valid, use :host)",
                               stream)
            method, path = h.get(":method", ""), h.get(":path", "")
        stream.method, stream.path = method, path
        self.requests.append(stream)
        if any(name not in h for name in required):
            self.respond(stream, 400, b"missing request headers\n")
            return
        if method in ("GET", "HEAD") and not stream.remote_fin:
            self.violation("%s without FLAG_FIN on its SYN_STREAM (SPDY/3 3.2.1: a request "
                           "without a body MUST set it)" % method, stream)
        if method == "POST" and "content-length" not in h:
            self.note("stream %d: POST without content-length (SPDY/3 3.2.1: SHOULD have one)"
                      % stream.id)
        if stream.remote_fin:
            self.on_stream_end(stream)

    def on_stream_end(self, stream):
        if stream.reply_seen or stream.reset is not None:
            return
        h = stream.request_headers
        cl = h.get("content-length")
        if cl is not None and (not cl.isdigit() or int(cl) != stream.received):
            # SPDY/3 3.2.1: the server MUST answer 400.
            self.violation("content-length %s but %d bytes of DATA" % (cl, stream.received), stream)
            self.respond(stream, 400, b"content-length does not match the DATA received\n")
            return
        if stream.method == "POST":
            body = ("%d %s" % (stream.received, stream.hash.hexdigest())).encode()
            self.respond(stream, 200, body, "text/plain")
        elif stream.method in ("GET", "HEAD"):
            self.serve_file(stream)
        else:
            self.respond(stream, 405, b"method not allowed\n")

    def serve_file(self, stream):
        path = stream.path.split("?", 1)[0]
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not path.startswith("/") or ".." in parts:
            self.respond(stream, 400, b"bad path\n")
            return
        full = os.path.join(self.opts.docroot, *parts)
        if not os.path.isfile(full):
            self.respond(stream, 404, b"not found\n")
            return
        with open(full, "rb") as f:
            body = f.read()
        self.respond(stream, 200, b"" if stream.method == "HEAD" else body,
                     "application/octet-stream", length=len(body))

    def respond(self, stream, status, body, ctype="text/plain", length=None):
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
        code = "%d %s" % (status, reason.get(status, ""))
        if self.version == "2":
            headers = [("status", code), ("version", "HTTP/1.1")]
        else:
            headers = [(":status", code), (":version", "HTTP/1.1")]
        headers += [("content-type", ctype),
                    ("content-length", str(len(body) if length is None else length)),
                    ("server", "strict-spdy/1")]
        self.send_reply(stream, headers, fin=not body)
        if body:
            stream.to_send = body
            stream.fin_after_body = True

    def on_stream_reset(self, stream, status):
        if not stream.local_fin:
            self.note("stream %d reset by the client before we finished: %s" % (
                stream.id, stream.reset))

    def pending_work(self):
        return any(not s.closed for s in self.streams.values())

    def summary(self):
        streams = [{"path": s.path, "method": s.method, "stream_id": s.id,
                    "request_bytes": s.received, "request_sha256": s.hash.hexdigest(),
                    "answered": s.reply_seen, "complete": s.closed and s.reset is None,
                    "reset": s.reset, "headers": s.request_headers} for s in self.requests]
        report = {"role": "server", "session": self.number, "peer": self.peer,
                  "version": self.version, "tls": self.opts.tls, "streams": streams,
                  "violations": self.violations, "failures": self.failures, "notes": self.notes,
                  "settings_received": self.settings_received,
                  "goaway_received": self.goaway_received,
                  "max_concurrent_streams_seen": self.max_concurrent_seen}
        if self.opts.flow_as:
            report["flow_as"] = self.opts.flow_as
        report.update(self.counts())
        report.update(self.trace())
        incomplete = [s for s in streams if not s["complete"]]
        report["ok"] = not self.violations and not self.failures and not incomplete
        return report


def run_server(opts):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", opts.port))
    listener.listen(16)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    ctx = None
    if opts.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts.tls[0], opts.tls[1])
        ctx.set_alpn_protocols([ALPN_IDS[opts.version]])
    if opts.port_file:
        with open(opts.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(opts.port_file + ".tmp", opts.port_file)
    print(port, flush=True)
    sessions = []
    finished = 0
    all_ok = True
    number = 0
    deadline = time.monotonic() + opts.timeout
    report_file = open(opts.json, "a") if opts.json and opts.json != "-" else None

    def close_session(session, why):
        nonlocal finished, all_ok
        if session.t.eof and session.t.error and session.pending_work():
            session.fail("connection error: %s" % session.t.error)
        if why:
            session.fail(why)
        session.t.close()
        sessions.remove(session)
        report = session.summary()
        all_ok = all_ok and report["ok"]
        line = json.dumps(report, sort_keys=True)
        if report_file:
            report_file.write(line + "\n")
            report_file.flush()
        elif opts.json == "-":
            print(line, flush=True)
        summarize(report, sys.stderr)
        finished += 1

    while True:
        now = time.monotonic()
        if opts.sessions and finished >= opts.sessions:
            break
        if now >= deadline:
            for s in list(sessions):
                close_session(s, "server --timeout %.1f s reached\n%s" % (
                    opts.timeout, s.diagnostics()))
            if finished < max(opts.sessions, 1):
                sys.stderr.write("strict_spdy: server: --timeout %.1f s reached with %d session(s) "
                                 "finished\n" % (opts.timeout, finished))
                all_ok = False
            break
        for s in list(sessions):
            if not s.closing:
                s.send_due_updates()
            s.produce_data()
            if s.closing and not s.t.out:
                close_session(s, None)
            elif s.t.eof and not s.t.out:
                close_session(s, None)
            elif s.pending_work() and now - s.t.last_io >= opts.stall:
                blocked = [st for st in s.streams.values() if st.pending_send()]
                close_session(s, "stalled: no byte moved for %.1f s with %d stream(s) "
                              "unfinished (%d waiting for a window)\n%s" % (
                                  now - s.t.last_io,
                                  sum(1 for st in s.streams.values() if not st.closed),
                                  len(blocked), s.diagnostics()))
        rlist = [listener] + [s.t for s in sessions if not s.t.eof]
        wlist = [s.t for s in sessions if s.t.out]
        waiting = any(s.pending_updates for s in sessions)
        try:
            readable, writable, _ = select.select(rlist, wlist, [], 0.005 if waiting else 0.05)
        except (OSError, ValueError):
            continue
        for t in writable:
            t.flush()
            for s in sessions:
                if s.t is t:
                    s.on_written()
        for r in readable:
            if r is listener:
                try:
                    conn, addr = listener.accept()
                except (BlockingIOError, OSError):
                    continue
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                number += 1
                session = accept_session(conn, addr, ctx, opts, number)
                if session is None:
                    finished += 1
                    all_ok = False
                    continue
                sessions.append(session)
                session.start()
            else:
                for s in sessions:
                    if s.t is r:
                        s.feed(s.t.read())
                        break
    listener.close()
    if report_file:
        report_file.close()
    return 0 if all_ok else 1


def accept_session(conn, addr, ctx, opts, number):
    peer = "%s:%d" % addr
    if ctx is not None:
        try:
            conn.settimeout(opts.stall)
            conn = ctx.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError) as e:
            sys.stderr.write("strict_spdy: server: TLS handshake with %s failed: %s\n" % (peer, e))
            conn.close()
            return None
        chosen = conn.selected_alpn_protocol()
        if chosen != ALPN_IDS[opts.version]:
            sys.stderr.write("strict_spdy: server: %s did not offer %s by ALPN (chosen: %r)\n" % (
                peer, ALPN_IDS[opts.version], chosen))
            conn.close()
            return None
    return ServerSession(Transport(conn), opts, peer, number)
