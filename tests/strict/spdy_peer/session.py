"""session.py — one SPDY session over a socket, either role: the transport, stream
states, every received frame checked against its version, flow control both ways
(windows we announced and windows the peer announced), the diagnostics of a stall, and the
summary written to stderr. client.py and server.py supply the behaviour of each role.
"""
import collections
import hashlib
import ssl
import struct
import time

from .wire import (
    CREDENTIAL, DATA_CHUNK, DEFAULT_WINDOW, FLAG_FIN, FLAG_SETTINGS_CLEAR, FLAG_UNIDIRECTIONAL,
    FRAME_NAMES, GOAWAY, GOAWAY_INTERNAL_ERROR, GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, HEADERS,
    HeaderCodec, MAX_WINDOW, NOOP, PING, RST_FLOW_CONTROL_ERROR, RST_NAMES, RST_PROTOCOL_ERROR,
    RST_STREAM, RST_STREAM_ALREADY_CLOSED, RST_STREAM_IN_USE, SETTINGS,
    SETTINGS_FLAG_PERSISTED, SETTINGS_FLAG_PERSIST_VALUE, SETTINGS_INITIAL_WINDOW_SIZE,
    SETTINGS_NAMES, SYN_REPLY, SYN_STREAM, Violation, WINDOW_UPDATE, control_frame, data_frame,
    flag_names)


# ---- streams and the transport ---------------------------------------------------------

class Stream:
    def __init__(self, stream_id, send_window, recv_window):
        self.id = stream_id
        self.path = None
        self.method = None
        self.request_headers = {}
        self.response_headers = {}
        self.reply_seen = False        # client: SYN_REPLY received; server: sent
        self.local_fin = False         # we sent FIN
        self.remote_fin = False        # the peer sent FIN
        self.reset = None              # "sent CANCEL" / "received PROTOCOL_ERROR"
        self.pushed = False
        self.send_window = send_window
        self.recv_window = recv_window
        self.recv_unacked = 0
        self.to_send = b""             # body we still have to send
        self.send_offset = 0
        self.fin_after_body = False
        self.hash = hashlib.sha256()
        self.received = 0              # DATA payload bytes
        self.body = bytearray()        # kept when small or when a content-encoding needs it
        self.keep_body = False
        self.error = None
        self.data_frames = 0

    @property
    def closed(self):
        return self.reset is not None or (self.local_fin and self.remote_fin)

    def pending_send(self):
        return self.reset is None and not self.local_fin and (
            self.send_offset < len(self.to_send) or self.fin_after_body)


class FrameLog:
    """The last frames each way, consecutive DATA frames folded into one line."""

    def __init__(self, keep=14):
        self.entries = collections.deque(maxlen=keep)

    def add(self, when, text, fold_key=None):
        if fold_key is not None and self.entries:
            last = self.entries[-1]
            if last[2] == fold_key:
                self.entries[-1] = (last[0], last[1], fold_key, last[3] + 1, when)
                return
        self.entries.append((when, text, fold_key, 1, when))

    def lines(self, t0):
        out = []
        for first, text, _, count, last in self.entries:
            if count > 1:
                out.append("  %7.3fs-%.3fs %s (x%d)" % (first - t0, last - t0, text, count))
            else:
                out.append("  %7.3fs %s" % (first - t0, text))
        return out


class Transport:
    """A connected socket (plain or TLS) in non-blocking mode with an output buffer."""

    def __init__(self, sock):
        self.sock = sock
        self.out = bytearray()
        self.eof = False
        self.error = None
        self.last_io = time.monotonic()   # the last byte that moved either way
        self.queued = 0                   # bytes ever given to send()
        self.written = 0                  # bytes the kernel took
        self.read_total = 0               # bytes ever read
        self.sock.setblocking(False)

    def send(self, frame):
        self.out += frame
        self.queued += len(frame)

    def fileno(self):
        return self.sock.fileno()

    def read(self):
        """Everything available now, TLS records buffered in the SSL object included (select
        cannot see those, so the loop reads until the socket would block)."""
        chunks = []
        while True:
            try:
                b = self.sock.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break
            except (OSError, ssl.SSLError) as e:
                self.error = "read: %s" % e
                self.eof = True
                break
            if not b:
                self.eof = True
                break
            chunks.append(b)
            self.read_total += len(b)
            self.last_io = time.monotonic()
        return b"".join(chunks)

    def flush(self):
        while self.out:
            try:
                n = self.sock.send(self.out[:65536])
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except (OSError, ssl.SSLError) as e:
                self.error = "write: %s" % e
                self.out.clear()
                self.eof = True
                return
            del self.out[:n]
            self.written += n
            if n:
                self.last_io = time.monotonic()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---- the session ---------------------------------------------------------------------

class Session:
    """One SPDY session, either side. The client and server modes drive it."""

    def __init__(self, role, version, transport, opts, flow_as=None):
        self.role = role
        self.version = version
        self.wire_version = 2 if version == "2" else 3
        self.t = transport
        self.opts = opts
        flow = flow_as or version                         # --flow-as: self-tests only
        self.stream_flow = flow != "2"
        self.session_flow = flow == "3.1"
        self.codec = HeaderCodec(version)
        self.streams = {}
        self.next_stream_id = 1 if role == "client" else 2
        self.last_peer_stream_id = 0
        self.inbuf = bytearray()
        self.t0 = time.monotonic()
        self.sent_log, self.recv_log = FrameLog(), FrameLog()
        self.frames_sent = collections.Counter()
        self.frames_received = collections.Counter()
        self.violation_counts = {}  # text -> [first time, count]
        self.tolerated = {}         # text -> count: deviations --tolerate-* accepted
        self.failures = []
        self.notes = []
        self.settings_received = {}
        self.goaway_received = None
        self.goaway_sent = False
        self.closing = False        # no more frames from us; close once flushed
        # Our announcements. Windows we grant the peer (what it may send us):
        self.announced_window = opts.window or DEFAULT_WINDOW
        self.session_recv_initial = max(opts.session_window or DEFAULT_WINDOW, DEFAULT_WINDOW)
        self.session_recv_window = DEFAULT_WINDOW
        self.session_recv_unacked = 0
        # Windows the peer grants us:
        self.peer_initial_window = DEFAULT_WINDOW
        self.session_send_window = DEFAULT_WINDOW
        self.window_updates_sent = {"stream": 0, "session": 0}
        # WINDOW_UPDATEs we sent, credited to the peer only for frames that began to
        # arrive after the update had left us: a frame already on its way cannot have been
        # sized by it. Entries: [stream id (0: session), delta, bytes queued up to and
        # including it, receive offset from which it counts (None: not written yet)].
        self.credits = []
        self.pending_updates = []  # (due time, stream id, delta): see grant()
        self.rx_offset = 0  # offset in the received byte stream of self.inbuf[0]
        self.pings_sent = {}        # we send none; an answer to one is a peer's mistake
        self.max_concurrent_seen = 0

    # -- bookkeeping --------------------------------------------------------------

    def now(self):
        return time.monotonic() - self.t0

    def violation(self, text, stream=None, rst=None, goaway=None):
        where = "stream %d: " % stream.id if stream is not None else ""
        key = where + text
        if key in self.violation_counts:   # the same fault again: counted, not repeated
            self.violation_counts[key][1] += 1
        else:
            self.violation_counts[key] = [self.now(), 1]
        if rst is not None and stream is not None and stream.reset is None:
            self.send_rst(stream, rst)
        if goaway is not None:
            self.send_goaway(goaway)
            self.closing = True

    @property
    def violations(self):
        return ["%.3fs %s%s" % (when, text, " (x%d)" % count if count > 1 else "")
                for text, (when, count) in self.violation_counts.items()]

    def note(self, text):
        self.notes.append("%.3fs %s" % (self.now(), text))

    def fail(self, text):
        self.failures.append("%.3fs %s" % (self.now(), text))

    def stream_label(self, stream):
        return "stream %d%s" % (stream.id, " " + stream.path if stream.path else "")

    def diagnostics(self):
        lines = ["windows (bytes left): "]
        parts = []
        if self.session_flow:
            parts.append("session: we may send %d, the peer may send %d (%d consumed and "
                         "not yet granted back)"
                         % (self.session_send_window,
                            self.session_recv_window + self.credit_in_flight(0),
                            self.session_recv_unacked))
        for s in sorted(self.streams.values(), key=lambda s: s.id):
            if s.closed and not s.pending_send():
                continue
            state = "%s: received %d B%s%s" % (
                self.stream_label(s), s.received, ", peer FIN" if s.remote_fin else "",
                ", our FIN" if s.local_fin else "")
            if s.send_offset < len(s.to_send):
                state += ", %d of %d B sent" % (s.send_offset, len(s.to_send))
            if self.stream_flow:
                state += ", we may send %d, the peer may send %d" % (
                    s.send_window, s.recv_window + self.credit_in_flight(s.id))
            parts.append(state)
        if not self.stream_flow:
            parts.append("SPDY/%s has no flow control" % self.version)
        lines[0] += "; ".join(parts) if parts else "none open"
        return "\n".join(lines)

    def trace(self):
        return {"last_frames_sent": self.sent_log.lines(self.t0),
                "last_frames_received": self.recv_log.lines(self.t0)}

    # -- sending ------------------------------------------------------------------

    def queue_control(self, ftype, flags, payload, text):
        self.t.send(control_frame(self.wire_version, ftype, flags, payload))
        self.frames_sent[FRAME_NAMES[ftype]] += 1
        self.sent_log.add(time.monotonic(), text)

    def queue_data(self, stream, flags, payload):
        self.t.send(data_frame(stream.id, flags, payload))
        self.frames_sent["DATA"] += 1
        self.sent_log.add(time.monotonic(), "DATA stream=%d len=%d flags=%s" % (
            stream.id, len(payload), flag_names(0, flags)),
            ("DATA", stream.id, flags, len(payload)))

    def header_text(self, headers):
        shown = ", ".join("%s: %s" % (n, v) for n, v in headers[:6])
        return "{%s%s}" % (shown, ", ..." if len(headers) > 6 else "")

    def send_settings(self, entries):
        """entries: list of (id, value); flags 0 (clients never ask for persistence)."""
        payload = bytearray(struct.pack(">I", len(entries)))
        for sid, value in entries:
            if self.version == "2":  # draft 2: 24-bit id little-endian, then 8 flag bits
                payload += struct.pack("<I", sid)[:3] + b"\x00"
            else:                    # draft 3: 8 flag bits, then 24-bit id big-endian
                payload += struct.pack(">I", sid & 0xFFFFFF)
            payload += struct.pack(">I", value)
        text = ", ".join("%s=%d" % (SETTINGS_NAMES.get(i, i), v) for i, v in entries)
        self.queue_control(SETTINGS, 0, bytes(payload), "SETTINGS " + text)

    def send_window_update(self, stream_id, delta):
        assert self.stream_flow and 0 < delta <= MAX_WINDOW
        assert stream_id != 0 or self.session_flow
        self.queue_control(WINDOW_UPDATE, 0, struct.pack(">II", stream_id, delta),
                           "WINDOW_UPDATE stream=%d delta=%d" % (stream_id, delta))
        self.credits.append([stream_id, delta, self.t.queued, None])
        self.window_updates_sent["session" if stream_id == 0 else "stream"] += 1

    def send_rst(self, stream, status):
        self.queue_control(RST_STREAM, 0, struct.pack(">II", stream.id, status),
                           "RST_STREAM stream=%d status=%s" % (stream.id, RST_NAMES[status]))
        stream.reset = "sent " + RST_NAMES[status]

    def send_goaway(self, status=GOAWAY_OK):
        if self.goaway_sent:
            return
        self.goaway_sent = True
        if self.version == "2":   # draft 2: last-good-stream-id only
            payload = struct.pack(">I", self.last_peer_stream_id)
        else:
            payload = struct.pack(">II", self.last_peer_stream_id, status)
        self.queue_control(GOAWAY, 0, payload, "GOAWAY last-good=%d status=%d" % (
            self.last_peer_stream_id, status))

    def open_stream(self, headers, fin, priority=0):
        """Client: a SYN_STREAM for a request. Returns the Stream."""
        sid = self.next_stream_id
        self.next_stream_id += 2
        stream = Stream(sid, self.peer_initial_window, self.announced_window)
        self.streams[sid] = stream
        block = self.codec.encode(headers)
        if self.version == "2":   # 2-bit priority, 14 unused bits
            payload = struct.pack(">IIH", sid, 0, (priority & 3) << 14) + block
        else:                     # 3-bit priority, 5 unused bits, slot 0
            payload = struct.pack(">IIBB", sid, 0, (priority & 7) << 5, 0) + block
        flags = FLAG_FIN if fin else 0
        self.queue_control(SYN_STREAM, flags, payload, "SYN_STREAM stream=%d flags=%s %s" % (
            sid, flag_names(SYN_STREAM, flags), self.header_text(headers)))
        stream.local_fin = fin
        return stream

    def send_reply(self, stream, headers, fin):
        block = self.codec.encode(headers)
        if self.version == "2":   # draft 2: 16 unused bits before the block
            payload = struct.pack(">IH", stream.id, 0) + block
        else:
            payload = struct.pack(">I", stream.id) + block
        flags = FLAG_FIN if fin else 0
        self.queue_control(SYN_REPLY, flags, payload, "SYN_REPLY stream=%d flags=%s %s" % (
            stream.id, flag_names(SYN_REPLY, flags), self.header_text(headers)))
        stream.reply_seen = True
        if fin:
            stream.local_fin = True

    def produce_data(self):
        """Moves body bytes into DATA frames as far as the windows allow."""
        if self.closing:
            return
        progress = True
        while progress and len(self.t.out) < (256 << 10):
            progress = False
            for stream in sorted(self.streams.values(), key=lambda s: s.id):
                if not stream.pending_send():
                    continue
                left = len(stream.to_send) - stream.send_offset
                n = min(left, DATA_CHUNK)
                if self.stream_flow:
                    n = min(n, stream.send_window)
                if self.session_flow:
                    n = min(n, self.session_send_window)
                if n <= 0 and left > 0:
                    continue  # blocked by a window: wait for WINDOW_UPDATE
                chunk = stream.to_send[stream.send_offset:stream.send_offset + n]
                stream.send_offset += n
                last = stream.send_offset == len(stream.to_send) and stream.fin_after_body
                self.queue_data(stream, FLAG_FIN if last else 0, chunk)
                if self.stream_flow:
                    stream.send_window -= n
                if self.session_flow:
                    self.session_send_window -= n
                if last:
                    stream.local_fin = True
                    stream.fin_after_body = False
                progress = True

    # -- receiving ----------------------------------------------------------------

    def feed(self, data):
        self.inbuf += data
        pos = 0
        try:
            while not self.closing and len(self.inbuf) - pos >= 8:
                w1, w2 = struct.unpack_from(">II", self.inbuf, pos)
                length = w2 & 0xFFFFFF
                if len(self.inbuf) - pos < 8 + length:
                    break
                payload = bytes(self.inbuf[pos + 8:pos + 8 + length])
                frame_start = self.rx_offset
                pos += 8 + length
                self.rx_offset += 8 + length
                self.on_frame(w1, w2, payload, frame_start)
        finally:
            del self.inbuf[:pos]

    def on_frame(self, w1, w2, payload, frame_start):
        """One whole frame: w1, w2 its two header words; frame_start its receive offset."""
        flags = w2 >> 24
        try:
            if w1 & 0x80000000:
                self.on_control((w1 >> 16) & 0x7FFF, w1 & 0xFFFF, flags, payload)
            else:
                self.apply_credits(frame_start)
                self.on_data(w1 & 0x7FFFFFFF, flags, payload)
        except Violation as e:
            # A frame we cannot make sense of (or a header block that broke the zlib
            # stream): a session error (SPDY/3 2.4.1).
            self.recv_log.add(time.monotonic(), "refused frame: header %08x %08x, payload %s%s" % (
                w1, w2, payload[:24].hex(), "..." if len(payload) > 24 else ""))
            self.violation(str(e), goaway=GOAWAY_PROTOCOL_ERROR)

    def on_control(self, version, ftype, flags, payload):
        name = FRAME_NAMES.get(ftype, "type %d" % ftype)
        self.frames_received[name] += 1
        if version != self.wire_version:
            raise Violation("%s carries version %d on a SPDY/%s session" % (
                name, version, self.version))
        allowed = {SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS}
        if self.version == "2":
            allowed.add(NOOP)
        else:
            allowed.add(WINDOW_UPDATE)
        if self.version == "3":
            allowed.add(CREDENTIAL)
        if ftype not in allowed:
            if ftype == WINDOW_UPDATE:  # version 2
                fields = struct.unpack(">II", payload) if len(payload) == 8 else (-1, -1)
                self.recv_log.add(time.monotonic(), "WINDOW_UPDATE stream=%d delta=%d (not SPDY/2)"
                                  % fields, ("WU", fields[0]))
                text = ("WINDOW_UPDATE received: SPDY/2 has no flow control (draft 2: \"never "
                        "implemented\", the frame is not part of SPDY/2)")
                if self.opts.tolerate_v2_window_update:
                    self.tolerated[text] = self.tolerated.get(text, 0) + 1
                else:
                    self.violation(text)
                return
            raise Violation("control frame type %d (%s) is not defined in SPDY/%s" % (
                ftype, name, self.version))
        handler = {SYN_STREAM: self.on_syn_stream, SYN_REPLY: self.on_syn_reply,
                   RST_STREAM: self.on_rst_stream, SETTINGS: self.on_settings,
                   NOOP: self.on_noop, PING: self.on_ping, GOAWAY: self.on_goaway,
                   HEADERS: self.on_headers, WINDOW_UPDATE: self.on_window_update,
                   CREDENTIAL: self.on_credential}[ftype]
        handler(flags, payload)

    def rst_already_closed(self):
        """The status for a frame after the peer's FIN: SPDY/2 has no STREAM_ALREADY_CLOSED."""
        return RST_PROTOCOL_ERROR if self.version == "2" else RST_STREAM_ALREADY_CLOSED

    def check_flags(self, name, flags, allowed):
        if flags & ~allowed:
            raise Violation("%s with undefined flags 0x%02x" % (name, flags))

    def check_length(self, name, payload, exact=None, minimum=None):
        if exact is not None and len(payload) != exact:
            raise Violation("%s of length %d, must be %d" % (name, len(payload), exact))
        if minimum is not None and len(payload) < minimum:
            raise Violation("%s of length %d, must be at least %d" % (name, len(payload), minimum))

    def stream_id_field(self, name, raw):
        if raw & 0x80000000:
            raise Violation("%s with the reserved bit of its stream id set" % name)
        return raw

    def on_syn_stream(self, flags, payload):
        self.check_flags("SYN_STREAM", flags, FLAG_FIN | FLAG_UNIDIRECTIONAL)
        fixed = 10
        self.check_length("SYN_STREAM", payload, minimum=12 if self.version == "2" else fixed + 1)
        sid, assoc = struct.unpack(">II", payload[:8])
        sid = self.stream_id_field("SYN_STREAM", sid)
        assoc = self.stream_id_field("SYN_STREAM associated-to", assoc)
        if self.version == "2":
            pri_word = struct.unpack(">H", payload[8:10])[0]
            priority, unused = pri_word >> 14, pri_word & 0x3FFF
            reserved = "14 unused bits" if unused else None
        else:
            priority, unused, slot = payload[8] >> 5, payload[8] & 0x1F, payload[9]
            reserved = "5 unused bits" if unused else ("slot %d (no CREDENTIAL was sent)" % slot
                                                       if slot else None)
        headers = self.codec.decode(payload[fixed:])  # always, to keep zlib in step
        self.recv_log.add(time.monotonic(), "SYN_STREAM stream=%d assoc=%d pri=%d flags=%s %s" % (
            sid, assoc, priority, flag_names(SYN_STREAM, flags), self.header_text(headers)))
        if reserved:
            self.violation("SYN_STREAM %d has non-zero %s" % (sid, reserved))
        if sid == 0:
            raise Violation("SYN_STREAM for stream 0")
        if sid % 2 != (0 if self.role == "client" else 1):
            raise Violation("SYN_STREAM %d: a %s must use %s stream ids" % (
                sid, "server" if self.role == "client" else "client",
                "even" if self.role == "client" else "odd"))
        if sid <= self.last_peer_stream_id:
            raise Violation("SYN_STREAM %d after stream %d: ids must increase" % (
                sid, self.last_peer_stream_id))
        self.last_peer_stream_id = sid
        if self.goaway_received is not None:
            self.violation("SYN_STREAM %d after the peer's own GOAWAY" % sid)
        stream = Stream(sid, self.peer_initial_window, self.announced_window)
        stream.request_headers = dict(headers)
        stream.remote_fin = bool(flags & FLAG_FIN)
        self.streams[sid] = stream
        if self.role == "client":
            self.on_push(stream, flags, assoc, headers)
        else:
            self.on_request(stream, flags, assoc, headers)

    def on_syn_reply(self, flags, payload):
        self.check_flags("SYN_REPLY", flags, FLAG_FIN)
        fixed = 6 if self.version == "2" else 4
        self.check_length("SYN_REPLY", payload, minimum=fixed + 1)
        sid = self.stream_id_field("SYN_REPLY", struct.unpack(">I", payload[:4])[0])
        if self.version == "2" and payload[4:6] != b"\x00\x00":
            self.violation("SYN_REPLY %d has non-zero unused bits %s" % (sid, payload[4:6].hex()))
        headers = self.codec.decode(payload[fixed:])
        self.recv_log.add(time.monotonic(), "SYN_REPLY stream=%d flags=%s %s" % (
            sid, flag_names(SYN_REPLY, flags), self.header_text(headers)))
        stream = self.streams.get(sid)
        if stream is None or sid % 2 != (1 if self.role == "client" else 0):
            self.violation("SYN_REPLY for stream %d, which we never opened" % sid)
            return
        if stream.reset is not None:
            return  # in flight when we reset it
        if stream.reply_seen:
            self.violation("second SYN_REPLY", stream,
                           rst=RST_PROTOCOL_ERROR if self.version == "2" else RST_STREAM_IN_USE)
            return
        stream.reply_seen = True
        self.take_headers(stream, headers, first=True)
        if flags & FLAG_FIN:
            stream.remote_fin = True
            self.on_stream_end(stream)

    def on_headers(self, flags, payload):
        self.check_flags("HEADERS", flags, FLAG_FIN)
        fixed = 6 if self.version == "2" else 4
        self.check_length("HEADERS", payload, minimum=fixed + 1)
        sid = self.stream_id_field("HEADERS", struct.unpack(">I", payload[:4])[0])
        if self.version == "2" and payload[4:6] != b"\x00\x00":
            self.violation("HEADERS %d has non-zero unused bits %s" % (sid, payload[4:6].hex()))
        headers = self.codec.decode(payload[fixed:])
        self.recv_log.add(time.monotonic(), "HEADERS stream=%d flags=%s %s" % (
            sid, flag_names(HEADERS, flags), self.header_text(headers)))
        stream = self.streams.get(sid)
        if stream is None:
            self.violation("HEADERS for unknown stream %d" % sid)
            return
        if stream.reset is not None:
            return
        if stream.remote_fin:
            self.violation("HEADERS after the peer's FIN", stream,
                           rst=self.rst_already_closed())
            return
        if self.role == "client" and not stream.reply_seen and not stream.pushed:
            self.violation("HEADERS before SYN_REPLY", stream, rst=RST_PROTOCOL_ERROR)
            return
        self.take_headers(stream, headers, first=False)
        if flags & FLAG_FIN:
            stream.remote_fin = True
            self.on_stream_end(stream)

    def take_headers(self, stream, headers, first):
        target = stream.response_headers if self.role == "client" else stream.request_headers
        for name, value in headers:
            if name in target:
                self.violation("header %r repeated in a later HEADERS frame" % name, stream,
                               rst=RST_PROTOCOL_ERROR)
                return
            target[name] = value
        if self.role == "client" and first:
            self.check_response_headers(stream)

    def on_rst_stream(self, flags, payload):
        self.check_flags("RST_STREAM", flags, 0)
        self.check_length("RST_STREAM", payload, exact=8)
        sid, status = struct.unpack(">II", payload)
        sid = self.stream_id_field("RST_STREAM", sid)
        self.recv_log.add(time.monotonic(), "RST_STREAM stream=%d status=%s" % (
            sid, RST_NAMES.get(status, status)))
        valid = {"2": range(1, 8), "3": range(1, 12), "3.1": [1, 2, 3, 4, 5, 6, 7, 8, 9, 11]}
        if status not in valid[self.version]:
            self.violation("RST_STREAM %d with status %d, not defined in SPDY/%s" % (
                sid, status, self.version))
        if sid == 0:
            raise Violation("RST_STREAM for stream 0")
        stream = self.streams.get(sid)
        if stream is None:
            self.note("RST_STREAM for stream %d, which never existed" % sid)
            return
        if stream.reset is None:
            stream.reset = "received " + RST_NAMES.get(status, str(status))
            if not (stream.local_fin and stream.remote_fin):
                self.on_stream_reset(stream, status)

    def on_settings(self, flags, payload):
        self.check_flags("SETTINGS", flags, FLAG_SETTINGS_CLEAR)
        self.check_length("SETTINGS", payload, minimum=4)
        count = struct.unpack(">I", payload[:4])[0]
        if len(payload) != 4 + 8 * count:
            raise Violation("SETTINGS of length %d announces %d entries (needs %d bytes)" % (
                len(payload), count, 4 + 8 * count))
        if flags & FLAG_SETTINGS_CLEAR and self.role == "server":
            self.violation("SETTINGS with CLEAR_SETTINGS from a client (only servers may)")
        known = range(1, 8) if self.version == "2" else range(1, 9)
        seen = {}
        texts = []
        for i in range(count):
            entry = payload[4 + 8 * i:12 + 8 * i]
            if self.version == "2":  # 24-bit id little-endian, then flags (draft 2)
                sid = entry[0] | entry[1] << 8 | entry[2] << 16
                eflags = entry[3]
            else:
                eflags = entry[0]
                sid = entry[1] << 16 | entry[2] << 8 | entry[3]
            value = struct.unpack(">I", entry[4:])[0]
            texts.append("%s=%d%s" % (SETTINGS_NAMES.get(sid, "id %d" % sid), value,
                                      " flags=%d" % eflags if eflags else ""))
            if sid not in known:
                self.violation("SETTINGS id %d (entry bytes %s) is not defined in SPDY/%s%s" % (
                    sid, entry[:4].hex(), self.version,
                    " (ids are 24-bit little-endian there)" if self.version == "2" else ""))
                continue
            # Only servers ask for persistence; only clients return persisted values.
            allowed_flags = (SETTINGS_FLAG_PERSISTED if self.role == "server"
                             else SETTINGS_FLAG_PERSIST_VALUE)
            if eflags & ~allowed_flags:
                self.violation("SETTINGS %s with flags 0x%02x, which a %s may not send" % (
                    SETTINGS_NAMES[sid], eflags, "client" if self.role == "server" else "server"))
            if sid in seen:
                self.violation("SETTINGS names %s twice in one frame" % SETTINGS_NAMES[sid])
                continue
            seen[sid] = value
        self.recv_log.add(time.monotonic(), "SETTINGS flags=%s %s" % (
            flag_names(SETTINGS, flags), ", ".join(texts)))
        for sid, value in seen.items():
            self.settings_received[SETTINGS_NAMES[sid]] = value
        if SETTINGS_INITIAL_WINDOW_SIZE in seen:
            value = seen[SETTINGS_INITIAL_WINDOW_SIZE]
            if not self.stream_flow:
                self.note("SETTINGS INITIAL_WINDOW_SIZE=%d on SPDY/2, which has no flow control"
                          % value)
            elif value > MAX_WINDOW:
                self.violation("SETTINGS INITIAL_WINDOW_SIZE=%d exceeds 2^31-1" % value,
                               goaway=GOAWAY_PROTOCOL_ERROR)
            else:
                # SPDY/3 2.6.8: existing stream windows move by the difference (may go
                # negative); the session window does not (SPDY/3.1 2.6.8).
                delta = value - self.peer_initial_window
                self.peer_initial_window = value
                for stream in self.streams.values():
                    stream.send_window += delta

    def on_noop(self, flags, payload):
        self.check_flags("NOOP", flags, 0)
        self.check_length("NOOP", payload, exact=0)
        self.recv_log.add(time.monotonic(), "NOOP")

    def on_ping(self, flags, payload):
        self.check_flags("PING", flags, 0)
        self.check_length("PING", payload, exact=4)
        ping_id = struct.unpack(">I", payload)[0]
        self.recv_log.add(time.monotonic(), "PING id=%d" % ping_id)
        ours = ping_id % 2 == (1 if self.role == "client" else 0)
        if ours:
            if self.pings_sent.pop(ping_id, None) is None:
                self.note("PING %d with our parity that we never sent: ignored" % ping_id)
            return
        self.queue_control(PING, 0, payload, "PING id=%d (answer)" % ping_id)

    def on_goaway(self, flags, payload):
        self.check_flags("GOAWAY", flags, 0)
        self.check_length("GOAWAY", payload, exact=4 if self.version == "2" else 8)
        last = self.stream_id_field("GOAWAY", struct.unpack(">I", payload[:4])[0])
        status = None if self.version == "2" else struct.unpack(">I", payload[4:])[0]
        self.recv_log.add(time.monotonic(), "GOAWAY last-good=%d%s" % (
            last, "" if status is None else " status=%d" % status))
        if status not in (None, GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR):
            self.violation("GOAWAY status %d is not defined" % status)
        self.goaway_received = {"last_good_stream_id": last, "status": status}
        if status:
            self.fail("the peer ended the session: GOAWAY status %d (%s)" % (
                status, {1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR"}.get(status, "?")))
        for stream in self.streams.values():
            if stream.id > last and stream.id % 2 == self.next_stream_id % 2 and not stream.closed:
                stream.reset = "not processed (GOAWAY)"
                self.on_stream_reset(stream, None)

    def on_window_update(self, flags, payload):
        self.check_flags("WINDOW_UPDATE", flags, 0)
        self.check_length("WINDOW_UPDATE", payload, exact=8)
        sid, delta = struct.unpack(">II", payload)
        self.recv_log.add(time.monotonic(), "WINDOW_UPDATE stream=%d delta=%d" % (sid, delta),
                          ("WU", sid))
        sid = self.stream_id_field("WINDOW_UPDATE", sid)
        if delta & 0x80000000 or delta == 0:
            self.violation("WINDOW_UPDATE stream %d with delta %d (legal: 1 to 2^31-1)" % (
                sid, delta), goaway=GOAWAY_PROTOCOL_ERROR)
            return
        if sid == 0:
            if self.version != "3.1":
                # SPDY/3 has no session window: stream 0 is no stream.
                self.violation("WINDOW_UPDATE for stream 0 (delta %d): SPDY/3 has no session "
                               "window; the peer is speaking SPDY/3.1" % delta,
                               goaway=GOAWAY_PROTOCOL_ERROR)
                return
            if self.session_send_window + delta > MAX_WINDOW:
                self.violation("session WINDOW_UPDATE takes the window to %d, above 2^31-1" % (
                    self.session_send_window + delta), goaway=GOAWAY_PROTOCOL_ERROR)
                return
            self.session_send_window += delta
            return
        stream = self.streams.get(sid)
        if stream is None:
            self.note("WINDOW_UPDATE for stream %d, which never existed" % sid)
            return
        if stream.reset is not None:
            return
        if stream.local_fin:
            # SPDY/3 2.6.8: a sender ignores them after its last frame; the receiver
            # "should not" send one after the FIN.
            self.note("WINDOW_UPDATE for stream %d after our FIN" % sid)
            return
        if stream.send_window + delta > MAX_WINDOW:
            self.violation("WINDOW_UPDATE takes the window to %d, above 2^31-1" % (
                stream.send_window + delta), stream, rst=RST_FLOW_CONTROL_ERROR)
            return
        stream.send_window += delta

    def on_credential(self, flags, payload):
        self.recv_log.add(time.monotonic(), "CREDENTIAL len=%d" % len(payload))
        if self.role == "client":
            self.violation("CREDENTIAL from a server (only clients send it)")
        else:
            self.note("CREDENTIAL received and ignored")

    def on_data(self, sid, flags, payload):
        self.frames_received["DATA"] += 1
        self.recv_log.add(time.monotonic(), "DATA stream=%d len=%d flags=%s" % (
            sid, len(payload), flag_names(0, flags)), ("DATA", sid, flags, len(payload)))
        if flags & ~FLAG_FIN:
            raise Violation("DATA with undefined flags 0x%02x" % flags)
        if sid == 0:
            raise Violation("DATA for stream 0")
        n = len(payload)
        # SPDY/3.1 2.6.8: every DATA counts against the session window, even in error.
        if self.session_flow:
            if n > self.session_recv_window:
                self.violation("DATA of %d bytes on stream %d with only %d left in the "
                               "session window we announced" % (n, sid, self.session_recv_window),
                               goaway=GOAWAY_PROTOCOL_ERROR)
                return
            self.session_recv_window -= n
            self.consume_session(n)
        stream = self.streams.get(sid)
        if stream is None:
            self.violation("DATA for stream %d, which was never opened" % sid)
            return
        if stream.reset is not None:
            return  # in flight when the stream was reset
        if stream.remote_fin:
            self.violation("DATA after the peer's FIN", stream,
                           rst=self.rst_already_closed())
            return
        if self.role == "client" and not stream.reply_seen and not stream.pushed:
            self.violation("DATA before SYN_REPLY", stream, rst=RST_PROTOCOL_ERROR)
            return
        if self.stream_flow:
            if n > stream.recv_window:
                self.violation("DATA of %d bytes with only %d left in the stream window we "
                               "announced (%d)" % (n, stream.recv_window, self.announced_window),
                               stream, rst=RST_FLOW_CONTROL_ERROR)
                return
            stream.recv_window -= n
        stream.received += n
        stream.data_frames += 1
        stream.hash.update(payload)
        if stream.keep_body:
            stream.body += payload
        if flags & FLAG_FIN:
            stream.remote_fin = True
        elif self.stream_flow:
            # We consume at once; the peer learns when half the window is used.
            stream.recv_unacked += n
            if stream.recv_unacked >= max(1, self.announced_window // 2):
                self.grant(stream.id, stream.recv_unacked)
                stream.recv_unacked = 0
        if stream.remote_fin:
            self.on_stream_end(stream)

    def consume_session(self, n):
        self.session_recv_unacked += n
        if self.session_recv_unacked >= self.session_recv_initial // 2:
            self.grant(0, self.session_recv_unacked)
            self.session_recv_unacked = 0

    def grant(self, stream_id, delta):
        """A WINDOW_UPDATE for bytes we consumed, sent --update-delay later: until it
        leaves, the peer may send only what is left of the window, so a sender that
        oversteps is caught before an update of ours could have excused it."""
        if self.opts.update_delay <= 0:
            self.send_window_update(stream_id, delta)
        else:
            due = time.monotonic() + self.opts.update_delay
            self.pending_updates.append((due, stream_id, delta))

    def send_due_updates(self):
        now = time.monotonic()
        keep = []
        for due, sid, delta in self.pending_updates:
            if due > now:
                keep.append((due, sid, delta))
                continue
            stream = self.streams.get(sid)
            if sid == 0 or (stream is not None and stream.reset is None and not stream.remote_fin):
                self.send_window_update(sid, delta)   # none after the peer's FIN (SPDY/3 2.6.8)
        self.pending_updates = keep

    def on_written(self):
        """After a write: WINDOW_UPDATEs now on the wire count from the next byte read."""
        for credit in self.credits:
            if credit[3] is None and credit[2] <= self.t.written:
                credit[3] = self.t.read_total

    def apply_credits(self, frame_start):
        keep = []
        for credit in self.credits:
            sid, delta, _, counts_from = credit
            if counts_from is None or counts_from > frame_start:
                keep.append(credit)
            elif sid == 0:
                self.session_recv_window += delta
            elif sid in self.streams:
                self.streams[sid].recv_window += delta
        self.credits = keep

    def credit_in_flight(self, sid):
        return sum(c[1] for c in self.credits if c[0] == sid)

    # -- hooks for the roles ------------------------------------------------------------

    def on_push(self, stream, flags, assoc, headers):
        raise NotImplementedError

    def on_request(self, stream, flags, assoc, headers):
        raise NotImplementedError

    def check_response_headers(self, stream):
        pass

    def on_stream_end(self, stream):
        pass

    def on_stream_reset(self, stream, status):
        pass

    def pending_work(self):
        raise NotImplementedError

    # -- the verdict --------------------------------------------------------------

    def counts(self):
        return {"frames_sent": dict(self.frames_sent),
                "frames_received": dict(self.frames_received),
                "window_updates_sent": dict(self.window_updates_sent),
                "tolerated": ["%s (x%d)" % (t, n) for t, n in self.tolerated.items()]}


FORBIDDEN_HEADERS = ("connection", "keep-alive", "proxy-connection", "transfer-encoding")


def check_header_names(session, stream, headers, required, allowed_colon, what):
    for name in required:
        if name not in headers:
            session.violation("%s without %r (%s)" % (what, name, ", ".join(sorted(headers))),
                              stream)
    for name in headers:
        if name in FORBIDDEN_HEADERS:
            session.violation("%s carries %r, which SPDY does not allow" % (what, name), stream)
        if session.version == "2" and name.startswith(":"):
            session.violation("%s carries %r: SPDY/3 names on a SPDY/2 session" % (what, name),
                              stream)
        if session.version != "2" and name.startswith(":") and name not in allowed_colon:
            session.violation("%s carries %r, not defined in SPDY/3" % (what, name), stream)
    if session.version != "2":
        for bare in ("method", "url", "status", "version", "scheme"):
            if bare in headers:
                session.violation("%s carries SPDY/2's %r on a SPDY/%s session" % (
                    what, bare, session.version), stream)


# ---- the summary on stderr (client and server) ---------------------------------------

def summarize(report, out):
    role = report["role"]
    what = "SPDY/%s %s %s" % (report["version"], "TLS" if report["tls"] else "plaintext", role)
    if role == "server":
        what += " session %d from %s" % (report["session"], report["peer"])
        streams = ["%s %s (%d B in)" % (s["method"], s["path"], s["request_bytes"])
                   for s in report["streams"]]
    else:
        streams = ["%s %s %s B" % (s["path"], s["status"], s["bytes"])
                   for s in report.get("streams", [])]
    for t in report.get("tolerated", []):
        out.write("strict_spdy: %s: tolerated: %s\n" % (what, t))
    if report["ok"]:
        out.write("strict_spdy: %s: ok%s\n" % (what, "".join("; " + s for s in streams)))
        return
    out.write("strict_spdy: %s: FAILED\n" % what)
    for v in report["violations"]:
        out.write("  violation: %s\n" % v)
    for f in report["failures"]:
        out.write("  failure: %s\n" % f)
    for s in report.get("streams", []):
        if not s["complete"] and role == "client":
            out.write("  incomplete: %s (%s, %d B received)\n" % (
                s["path"], s["error"] or "no FIN", s["wire_bytes"]))
        elif not s["complete"]:
            out.write("  incomplete: stream %d %s %s (%s)\n" % (
                s["stream_id"], s["method"], s["path"], s["reset"] or "not finished"))
    for key in ("last_frames_sent", "last_frames_received"):
        if key in report:
            lines = "\n".join(report[key]) or "    (none)"
            out.write("  %s:\n%s\n" % (key.replace("_", " "), lines))
