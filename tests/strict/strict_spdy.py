#!/usr/bin/python3
"""strict_spdy.py — a strict SPDY/2, SPDY/3 and SPDY/3.1 endpoint written from the
specification text (the Chromium drafts 2, 3 and 3.1 and draft-mbelshe-httpbis-spdy-00),
not from speedy's C code. Standard library only.

It sends exactly and only what the chosen version defines and checks strictly what it
receives: frame layout (lengths, flags, versions, reserved bits), header blocks through
ONE zlib context per direction primed with the version's dictionary, the version's
header names, stream states, and flow control:
  SPDY/2    no flow control: never a WINDOW_UPDATE, either way;
  SPDY/3    per-stream windows only: a WINDOW_UPDATE for stream 0 is a protocol error;
  SPDY/3.1  per-stream and per-session windows, both 64 KiB at the start.
The peer must never exceed a window we announced; we never exceed one it announced.
A stall (no bytes for --stall seconds while work is pending) is reported with the
windows and the last frames sent and received, never waited out.

  strict_spdy.py client --version V --connect HOST:PORT [--tls --ca FILE] --get PATH...
  strict_spdy.py server --version V --docroot DIR [--tls CERT KEY] [--sessions N]
  strict_spdy.py dictionaries --spec-dir DIR
Run with --help for every option. Exit status: 0 clean, 1 a failure or a violation by
the peer, 2 bad usage. tests/strict/README.md says how the tests use it.
"""
import argparse
import collections
import hashlib
import json
import os
import re
import select
import socket
import ssl
import struct
import sys
import time
import zlib

# ---- constants from the drafts -------------------------------------------------------

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, NOOP = 1, 2, 3, 4, 5
PING, GOAWAY, HEADERS, WINDOW_UPDATE, CREDENTIAL = 6, 7, 8, 9, 10
FRAME_NAMES = {SYN_STREAM: "SYN_STREAM", SYN_REPLY: "SYN_REPLY", RST_STREAM: "RST_STREAM",
               SETTINGS: "SETTINGS", NOOP: "NOOP", PING: "PING", GOAWAY: "GOAWAY",
               HEADERS: "HEADERS", WINDOW_UPDATE: "WINDOW_UPDATE", CREDENTIAL: "CREDENTIAL"}

FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02
FLAG_SETTINGS_CLEAR = 0x01
SETTINGS_FLAG_PERSIST_VALUE = 0x01
SETTINGS_FLAG_PERSISTED = 0x02

SETTINGS_MAX_CONCURRENT_STREAMS = 4
SETTINGS_INITIAL_WINDOW_SIZE = 7
SETTINGS_NAMES = {1: "UPLOAD_BANDWIDTH", 2: "DOWNLOAD_BANDWIDTH", 3: "ROUND_TRIP_TIME",
                  4: "MAX_CONCURRENT_STREAMS", 5: "CURRENT_CWND",
                  6: "DOWNLOAD_RETRANS_RATE", 7: "INITIAL_WINDOW_SIZE",
                  8: "CLIENT_CERTIFICATE_VECTOR_SIZE"}

RST_PROTOCOL_ERROR, RST_INVALID_STREAM, RST_REFUSED_STREAM = 1, 2, 3
RST_CANCEL, RST_FLOW_CONTROL_ERROR, RST_STREAM_IN_USE, RST_STREAM_ALREADY_CLOSED = 5, 7, 8, 9
RST_NAMES = {1: "PROTOCOL_ERROR", 2: "INVALID_STREAM", 3: "REFUSED_STREAM",
             4: "UNSUPPORTED_VERSION", 5: "CANCEL", 6: "INTERNAL_ERROR",
             7: "FLOW_CONTROL_ERROR", 8: "STREAM_IN_USE", 9: "STREAM_ALREADY_CLOSED",
             10: "INVALID_CREDENTIALS", 11: "FRAME_TOO_LARGE"}
GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR = 0, 1, 2  # NOTES.md: 2, not 11

DEFAULT_WINDOW = 65536          # SPDY/3 2.6.8, SPDY/3.1 2.6.8: streams and session
MAX_WINDOW = 0x7FFFFFFF
DATA_CHUNK = 16384              # our DATA frames carry at most this much
MAX_HEADER_BLOCK = 1 << 20      # a decompressed header block larger than this is refused

VERSIONS = ("2", "3", "3.1")
ALPN_IDS = {"2": "spdy/2", "3": "spdy/3", "3.1": "spdy/3.1"}

# ---- the zlib dictionaries -------------------------------------------------------------

# SPDY/2 (draft 2, "Name/Value header block format"; NOTES.md has the exact text): this
# text without line breaks, followed by one NUL byte, 907 bytes.
DICT_V2 = (
    b"optionsgetheadpostputdeletetraceacceptaccept-charsetaccept-encodingaccept-"
    b"languageauthorizationexpectfromhostif-modified-sinceif-matchif-none-matchi"
    b"f-rangeif-unmodifiedsincemax-forwardsproxy-authorizationrangerefererteuser"
    b"-agent10010120020120220320420520630030130230330430530630740040140240340440"
    b"5406407408409410411412413414415416417500501502503504505accept-rangesageeta"
    b"glocationproxy-authenticatepublicretry-afterservervarywarningwww-authentic"
    b"ateallowcontent-basecontent-encodingcache-controlconnectiondatetrailertran"
    b"sfer-encodingupgradeviawarningcontent-languagecontent-lengthcontent-locati"
    b"oncontent-md5content-rangecontent-typeetagexpireslast-modifiedset-cookieMo"
    b"ndayTuesdayWednesdayThursdayFridaySaturdaySundayJanFebMarAprMayJunJulAugSe"
    b"pOctNovDecchunkedtext/htmlimage/pngimage/jpgimage/gifapplication/xmlapplic"
    b"ation/xhtmltext/plainpublicmax-agecharset=iso-8859-1utf-8gzipdeflateHTTP/1"
    b".1statusversionurl\x00")

# SPDY/3 and 3.1 (draft-mbelshe-httpbis-spdy-00 2.6.10.1, 1,423 bytes): words each with a
# 32-bit big-endian length in front, then plain text. `dictionaries` re-reads the hex
# table from the draft and compares.
_V3_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding "
    "accept-language accept-ranges age allow authorization cache-control connection "
    "content-base content-encoding content-language content-length content-location "
    "content-md5 content-range content-type date etag expect expires from host if-match "
    "if-modified-since if-none-match if-range if-unmodified-since last-modified location "
    "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after "
    "server te trailer transfer-encoding upgrade user-agent vary via warning "
    "www-authenticate method get status").split() + [
    "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin"]
_V3_TAIL = (
    b"100101201202205206300302303304305306307402405406407408409410411412413414415416417"
    b"502504505203 Non-Authoritative Information204 No Content301 Moved Permanently"
    b"400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error"
    b"501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct "
    b"Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,"
    b"image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
    b"publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
DICT_V3 = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _V3_WORDS) + _V3_TAIL

assert len(DICT_V2) == 907 and zlib.adler32(DICT_V2) == 0xDFA251B2
assert len(DICT_V3) == 1423 and zlib.adler32(DICT_V3) == 0xE3C6A7C2


def dictionary_for(version):
    return DICT_V2 if version == "2" else DICT_V3


class Violation(Exception):
    """Something the peer sent that its version does not allow."""


# ---- header blocks -------------------------------------------------------------------

class HeaderCodec:
    """One zlib stream per direction for the whole session (SPDY/3 2.6.10.1: "a single
    zlib stream for all name value pairs in one direction on a connection"), each primed
    with the version's dictionary, a SYNC_FLUSH after every block."""

    def __init__(self, version):
        self.version = version
        self.dictionary = dictionary_for(version)
        self.deflater = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY,
                                         self.dictionary)
        self.inflater = zlib.decompressobj(zdict=self.dictionary)
        self.blocks_in = 0
        self.broken = False

    def encode(self, headers):
        """headers: list of (name, value) str pairs, names unique and lower case."""
        wide = self.version != "2"
        fmt = ">I" if wide else ">H"
        out = bytearray(struct.pack(fmt, len(headers)))
        for name, value in headers:
            for field in (name.encode("latin-1"), value.encode("latin-1")):
                out += struct.pack(fmt, len(field)) + field
        return self.deflater.compress(bytes(out)) + self.deflater.flush(zlib.Z_SYNC_FLUSH)

    def decode(self, block):
        """Returns the header list; raises Violation (the session is then unusable)."""
        if self.broken:
            raise Violation("header compression state already broken")
        self.broken = True  # until this block is fully understood
        if self.blocks_in == 0:
            if len(block) < 6:
                raise Violation("first header block of %d bytes cannot hold a zlib header "
                                "with a dictionary id" % len(block))
            cmf, flg = block[0], block[1]
            if cmf & 0x0F != 8 or (cmf << 8 | flg) % 31 != 0:
                raise Violation("first header block does not start with a zlib header "
                                "(%02x %02x)" % (cmf, flg))
            if not flg & 0x20:
                raise Violation("first header block is not compressed with the SPDY/%s "
                                "dictionary (FDICT not set)" % self.version)
            dict_id = struct.unpack(">I", block[2:6])[0]
            if dict_id != zlib.adler32(self.dictionary):
                raise Violation("first header block names dictionary %08x, SPDY/%s's is %08x"
                                % (dict_id, self.version, zlib.adler32(self.dictionary)))
        if not block.endswith(b"\x00\x00\xff\xff"):
            raise Violation("header block does not end with a zlib SYNC_FLUSH "
                            "(00 00 ff ff): ends %s" % block[-4:].hex())
        try:
            plain = self.inflater.decompress(block, MAX_HEADER_BLOCK)
        except zlib.error as e:
            raise Violation("header block does not inflate with the SPDY/%s dictionary "
                            "through the session's zlib stream: %s" % (self.version, e))
        if self.inflater.unconsumed_tail:
            raise Violation("header block inflates to more than %d bytes" % MAX_HEADER_BLOCK)
        if self.inflater.eof:
            raise Violation("header block ends the zlib stream (a final block was sent)")
        self.blocks_in += 1
        headers = parse_name_values(self.version, plain)
        self.broken = False
        return headers


def parse_name_values(version, plain):
    """The Name/Value block: 16-bit counts and lengths in SPDY/2, 32-bit in SPDY/3."""
    size, fmt = (2, ">H") if version == "2" else (4, ">I")
    pos = 0

    def take_length(what):
        nonlocal pos
        if len(plain) - pos < size:
            raise Violation("header block truncated in the length of %s" % what)
        n = struct.unpack(fmt, plain[pos:pos + size])[0]
        pos += size
        if n > len(plain) - pos:
            raise Violation("header block: %s of %d bytes, only %d left" % (
                what, n, len(plain) - pos))
        field = plain[pos:pos + n]
        pos += n
        return field

    if len(plain) < size:
        raise Violation("header block of %d bytes has no pair count" % len(plain))
    count = struct.unpack(fmt, plain[:size])[0]
    pos = size
    headers = []
    seen = set()
    for i in range(count):
        name = take_length("name %d" % (i + 1))
        value = take_length("value %d" % (i + 1))
        if not name:
            raise Violation("header name %d is empty" % (i + 1))
        if b"\x00" in name:
            raise Violation("header name %r contains a NUL" % name)
        if name.lower() != name:
            raise Violation("header name %r is not lower case" % name)
        if name in seen:
            raise Violation("header name %r appears twice (values must be NUL-joined)" % name)
        seen.add(name)
        if version == "2" and not value:
            raise Violation("header %r has an empty value (SPDY/2 requires length > 0)" % name)
        if value and (value.startswith(b"\x00") or value.endswith(b"\x00") or b"\x00\x00" in value):
            raise Violation("header %r has an empty NUL-separated value" % name)
        headers.append((name.decode("latin-1"), value.decode("latin-1")))
    if pos != len(plain):
        raise Violation("header block has %d bytes after its %d pairs" % (len(plain) - pos, count))
    return headers


# ---- frames --------------------------------------------------------------------------

def control_frame(wire_version, ftype, flags, payload):
    return struct.pack(">HHI", 0x8000 | wire_version, ftype, flags << 24 | len(payload)) + payload


def data_frame(stream_id, flags, payload):
    return struct.pack(">II", stream_id, flags << 24 | len(payload)) + payload


def flag_names(ftype, flags):
    names = []
    if ftype == SETTINGS:
        if flags & FLAG_SETTINGS_CLEAR:
            names.append("CLEAR_SETTINGS")
    else:
        if flags & FLAG_FIN:
            names.append("FIN")
        if flags & FLAG_UNIDIRECTIONAL and ftype == SYN_STREAM:
            names.append("UNIDIRECTIONAL")
    return "|".join(names) or "0"


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


# ---- client ----------------------------------------------------------------------------

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


# ---- server ----------------------------------------------------------------------------

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


# ---- dictionaries check ------------------------------------------------------------

def check_dictionaries(opts):
    """Compares the embedded dictionaries with the specification text."""
    ok = True
    with open(os.path.join(opts.spec_dir, "draft-mbelshe-httpbis-spdy-00.txt")) as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if "SPDY_dictionary_txt[]" in line)
    v3 = bytearray()
    for line in lines[start + 1:]:
        if "};" in line:
            break
        if re.match(r"\s+0x", line):
            code = line.split("\\\\")[0]
            v3 += bytes(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", code))
    with open(os.path.join(opts.spec_dir, "NOTES.md")) as f:
        notes = f.read()
    m = re.search(r"## The SPDY/2 zlib dictionary.*?```\n(.*?)```", notes, re.S)
    v2 = m.group(1).replace("\n", "").encode() + b"\x00" if m else b""
    for name, ours, spec in (("SPDY/2", DICT_V2, v2), ("SPDY/3", DICT_V3, bytes(v3))):
        same = ours == spec
        ok = ok and same
        print("%s dictionary: embedded %d bytes adler32 %08x, specification %d bytes adler32 "
              "%08x: %s" % (name, len(ours), zlib.adler32(ours), len(spec), zlib.adler32(spec),
                            "identical" if same else "DIFFERENT"))
    return 0 if ok else 1


# ---- options -------------------------------------------------------------------------

def positive_int(text):
    value = int(text, 0)
    if value < 1 or value > MAX_WINDOW:
        raise argparse.ArgumentTypeError("%s is not within 1 and 2^31-1" % text)
    return value


def main(argv):
    parser = argparse.ArgumentParser(
        prog="strict_spdy.py",
        description="A strict SPDY/2, /3, /3.1 endpoint from the specification.")
    sub = parser.add_subparsers(dest="mode", required=True)

    def common(p):
        p.add_argument("--version", choices=VERSIONS, required=True,
                       help="SPDY version to speak (3 and 3.1 both carry version 3 on the wire)")
        p.add_argument("--window", type=positive_int, default=None,
                       help="announce this stream window with SETTINGS_INITIAL_WINDOW_SIZE "
                            "(SPDY/3, 3.1; default: announce nothing, i.e. 64 KiB)")
        p.add_argument("--session-window", type=positive_int, default=None,
                       help="SPDY/3.1: raise the session window to this size with a "
                            "WINDOW_UPDATE for stream 0 at the start (default: stay at 64 KiB)")
        p.add_argument("--update-delay", type=float, default=0.02,
                       help="send each WINDOW_UPDATE this many seconds after the bytes it "
                            "returns were consumed, so that a sender overstepping a window is "
                            "caught, not excused by an update already on its way (default 0.02)")
        p.add_argument("--stall", type=float, default=5.0,
                       help="seconds without a byte from the peer while work is pending "
                            "that count as a stall (default 5)")
        p.add_argument("--timeout", type=float, default=30.0,
                       help="limit for the whole run in seconds (default 30)")
        p.add_argument("--tolerate-v2-window-update", action="store_true",
                       help="SPDY/2: count WINDOW_UPDATEs from the peer under 'tolerated' "
                            "instead of failing (draft 2 tells a receiver to ignore unknown "
                            "control frames; the peer must still not wait for ours)")
        p.add_argument("--json", default=None,
                       help="write the JSON summary here ('-': stdout; server: one line per "
                            "session, appended)")

    c = sub.add_parser("client", help="connect, send requests on one session, check the answers")
    common(c)
    c.add_argument("--connect", required=True, metavar="HOST:PORT")
    c.add_argument("--tls", action="store_true",
                   help="TLS with ALPN offering only the version's id")
    c.add_argument("--ca",
                   help="CA file to verify the server (default with --tls: no verification)")
    c.add_argument("--servername", help="TLS server name (default: the --connect host)")
    c.add_argument("--host", help=":host / host header (default: the --connect value)")
    c.add_argument("--get", action="append", default=[], metavar="PATH",
                   help="GET PATH; repeatable, all concurrent on the one session")
    c.add_argument("--post", action="append", default=[], nargs=2, metavar=("PATH", "FILE"),
                   help="POST the contents of FILE to PATH; repeatable")
    c.add_argument("--linger", type=float, default=0.3,
                   help="after the last answer and our GOAWAY, keep reading this long "
                        "(default 0.3)")
    c.add_argument("--connect-timeout", type=float, default=5.0)
    c.add_argument("--silence-note", type=float, default=0.5,
                   help="note (without failing) a pause of the peer this long or longer "
                        "while streams are unfinished (default 0.5 s)")
    c.add_argument("--keep-bodies", action="store_true",
                   help="keep bodies in memory (needed for --show-body)")
    c.add_argument("--show-body", dest="show_body_max", type=int, default=0, metavar="BYTES",
                   help="put bodies of at most BYTES into the JSON (implies --keep-bodies)")

    s = sub.add_parser("server",
                       help="listen on 127.0.0.1, serve files (GET) and digest uploads (POST)")
    common(s)
    s.add_argument("--docroot", required=True)
    s.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"),
                   help="TLS; ALPN offers only the version's id")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--port-file", help="write the port here once listening")
    s.add_argument("--sessions", type=int, default=0,
                   help="exit after this many sessions ended (default 0: run until --timeout)")
    s.add_argument("--max-streams", type=int, default=None,
                   help="announce SETTINGS_MAX_CONCURRENT_STREAMS (default: nothing)")
    s.add_argument("--flow-as", choices=VERSIONS, default=None,
                   help="SELF-TESTS ONLY: apply this version's flow control whatever the wire "
                        "version (a deliberately wrong server)")

    d = sub.add_parser("dictionaries",
                       help="compare the embedded zlib dictionaries with the spec text")
    d.add_argument("--spec-dir", required=True)

    opts = parser.parse_args(argv)
    if opts.mode == "dictionaries":
        return check_dictionaries(opts)
    if opts.version == "2" and (opts.window or opts.session_window):
        parser.error("SPDY/2 has no flow control: --window and --session-window do not apply")
    if opts.version != "3.1" and opts.session_window:
        parser.error("--session-window is SPDY/3.1 only")
    if opts.mode == "client":
        if not opts.get and not opts.post:
            parser.error("client: nothing to do (give --get PATH or --post PATH FILE)")
        if opts.show_body_max:
            opts.keep_bodies = True
        opts.operations = [("GET", p, None) for p in opts.get]
        for path, file in opts.post:
            with open(file, "rb") as f:
                opts.operations.append(("POST", path, f.read()))
        return run_client(opts)
    if opts.window is not None and opts.window < DEFAULT_WINDOW:
        # The client may already be sending at 64 KiB when our SETTINGS arrives, and SPDY
        # gives no way to know when it applied them; a smaller window could not be judged.
        parser.error("server: --window below 65536 cannot be checked strictly")
    if not os.path.isdir(opts.docroot):
        parser.error("--docroot %s is not a directory" % opts.docroot)
    return run_server(opts)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(1)
