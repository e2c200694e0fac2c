"""attacks.py — every attack on a running speedyd, as a function.

Each attack is attack(server, stop, stats): it hammers server until the threading.Event
stop is set, reconnecting whenever the server ends its connection (that is the defence
working, and a real attacker would come back), and counts what happened in the dict
stats ("connections", "closed_by_server", "goaway", "rst", ...). The assertions live in
run_attacks.py; bench/attacks/run.py runs the same functions for figures.
"""
import socket
import struct
import threading
import time

import attacklib as A


def _count(stats, key, n=1):
    stats[key] = stats.get(key, 0) + n


def _note_frames(stats, raw, state):
    """Counts GOAWAY and RST_STREAM (by status) the server sent."""
    state["buf"] = state.get("buf", b"") + raw
    frames, state["buf"] = A.parse_frames(state["buf"])
    for is_ctrl, ftype, _flags, payload in frames:
        if not is_ctrl:
            continue
        if ftype == A.GOAWAY:
            _count(stats, "goaway")
        elif ftype == A.RST_STREAM and len(payload) >= 8:
            _count(stats, "rst_%d" % struct.unpack(">I", payload[4:8])[0])


def _flood(server, stop, stats, make_batch, setup=None, read=True):
    """Connect, optionally set up, send batches until the server hangs up; repeat."""
    while not stop.is_set():
        try:
            s = A.attacker_socket(server.port)
        except OSError:
            _count(stats, "connect_failed")
            time.sleep(0.05)
            continue
        _count(stats, "connections")
        state = {"deflater": A.Deflater(), "next_id": 1}
        try:
            if setup is not None and not A.send_all(s, setup(state)):
                continue
            while not stop.is_set():
                if not A.send_all(s, make_batch(state)):
                    _count(stats, "closed_by_server")
                    break
                if read:
                    raw, closed = A.drain(s)
                    _note_frames(stats, raw, state)
                    if closed:
                        _count(stats, "closed_by_server")
                        break
        finally:
            s.close()


def _open_stream(state, path="/index.html", fin=True):
    sid = state["next_id"]
    state["next_id"] += 2
    return sid, A.syn_stream(state["deflater"], sid, A.request_headers(path), fin=fin)


# ---- floods of cheap frames ---------------------------------------------------------


def ping_flood(server, stop, stats):
    _flood(server, stop, stats, lambda st: b"".join(A.ping(2 * i + 1) for i in range(500)))


def settings_flood(server, stop, stats):
    frame = A.settings([(4, 100), (7, 65536), (5, 1)])  # MAX_CONCURRENT, INITIAL_WINDOW
    _flood(server, stop, stats, lambda st: frame * 500)


def window_update_flood(server, stop, stats):
    def setup(state):
        sid, frame = _open_stream(state, "/big.bin")
        state["sid"] = sid
        return frame

    def batch(state):
        return (A.window_update(0, 1) + A.window_update(state["sid"], 1)) * 250

    _flood(server, stop, stats, batch, setup)


def empty_data_flood(server, stop, stats):
    def setup(state):
        sid, frame = _open_stream(state, "/index.html", fin=False)
        state["sid"] = sid
        return frame

    _flood(server, stop, stats, lambda st: A.data(st["sid"], 0) * 1000, setup)


def unknown_control_flood(server, stop, stats):
    frames = b"".join(A.ctrl(0x4000 + i, 0, b"u" * (i % 64)) for i in range(500))
    _flood(server, stop, stats, lambda st: frames)


def reconnecting_flood(server, stop, stats):
    """A SETTINGS flood that reconnects whenever it is cut off, and notes per connection
    whether the server opened a session at all (it sends SETTINGS first) or closed it
    without a byte: the per-address flood meter refuses a flooder's new connections."""
    flood = A.settings([(4, 100)]) * 200
    while not stop.is_set():
        try:
            s = A.attacker_socket(server.port)
        except OSError:
            _count(stats, "connect_failed")
            time.sleep(0.05)
            continue
        _count(stats, "connections")
        heard = False
        try:
            while not stop.is_set():
                sent = A.send_all(s, flood)
                raw, closed = A.drain(s)
                heard = heard or len(raw) > 0
                if not sent or closed:
                    _count(stats, "closed_by_server")
                    break
                time.sleep(0.001)
        finally:
            s.close()
        _count(stats, "sessions" if heard else "refused_at_once")


def many_clients_one_address(server, stop, stats, total=3000):
    """Not an attack: 3,000 well-behaved clients behind one address (a NAT), one after
    another, each opening with SETTINGS and asking for a page. The per-address flood
    meter must not take their opening SETTINGS for a flood."""
    for _ in range(total):  # all of them, even after stop: bounded by total
        try:
            s = A.attacker_socket(server.port)
        except OSError:
            _count(stats, "connect_failed")
            continue
        _count(stats, "connections")
        state = {"deflater": A.Deflater(), "next_id": 1}
        try:
            _sid, syn = _open_stream(state)
            A.send_all(s, A.settings([(4, 100)]) + syn)
            got, end = b"", time.monotonic() + 5
            while time.monotonic() < end:
                frames, _rest = A.parse_frames(got)
                if any(c and t == A.SYN_REPLY for c, t, _f, _p in frames):
                    _count(stats, "answered")
                    break
                try:
                    chunk = s.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
        finally:
            s.close()


# ---- streams --------------------------------------------------------------------------


def rapid_reset(server, stop, stats):
    def batch(state):
        out = []
        for _ in range(100):
            sid, frame = _open_stream(state, "/big.bin")
            out.append(frame + A.rst(sid, 5))  # CANCEL at once
        return b"".join(out)

    _flood(server, stop, stats, batch)


def made_you_reset(server, stop, stats):
    """Makes the server reset streams itself: a window pushed past 2^31-1 and DATA on a
    stream the client already half-closed, both after the server did the work."""
    def batch(state):
        out = []
        for i in range(50):
            sid, frame = _open_stream(state, "/big.bin")
            out.append(frame)
            if i % 2:
                out.append(A.window_update(sid, 0x7FFFFFFF))
            else:
                out.append(A.data(sid, 0, b"x"))
        return b"".join(out)

    _flood(server, stop, stats, batch)


def stream_id_exhaustion(server, stop, stats):
    """Jumps to the last stream ids, then tries to go on (a protocol error)."""
    def batch(state):
        d = state["deflater"]
        out = A.syn_stream(d, 0x7FFFFFFD, A.request_headers("/index.html"))
        out += A.syn_stream(d, 0x7FFFFFFF, A.request_headers("/index.html"))
        out += A.syn_stream(d, 5, A.request_headers("/index.html"))
        return out

    _flood(server, stop, stats, batch)


def streams_beyond_max(server, stop, stats):
    """Opens far more streams than MAX_CONCURRENT_STREAMS and never reads them."""
    def batch(state):
        if state["next_id"] > 2000:
            time.sleep(0.05)
            return A.ping(1)
        return b"".join(_open_stream(state, "/big.bin")[1] for _ in range(200))

    _flood(server, stop, stats, batch, read=False)


def window_overflow(server, stop, stats):
    def batch(state):
        sid, frame = _open_stream(state, "/big.bin")
        return (frame + A.window_update(sid, 0x7FFFFFFF) + A.window_update(0, 0x7FFFFFFF) +
                A.window_update(0, 0x7FFFFFFF))

    _flood(server, stop, stats, batch)


def data_on_dead_streams(server, stop, stats):
    """DATA for streams never opened, and for streams the client half-closed."""
    def batch(state):
        sid, frame = _open_stream(state, "/index.html")
        return frame + A.data(sid, 0, b"late") + A.data(sid + 1000001, 0, b"ghost") * 20

    _flood(server, stop, stats, batch)


def far_future_frames(server, stop, stats):
    def batch(state):
        far = 0x7FFFFF01
        d = state["deflater"]
        return (A.window_update(far, 4096) + A.rst(far, 5) + A.data(far, 0, b"z" * 64) +
                A.headers_frame(d, far, [("x-far", "1")]) + A.ping(7)) * 50

    _flood(server, stop, stats, batch)


# ---- header bombs -----------------------------------------------------------------------


def zlib_bomb(server, stop, stats):
    """A header value of 16 MiB of zeros: about 16 KiB compressed."""
    bomb = A.nv_block(A.request_headers("/index.html") + [("x-bomb", b"\0" * (16 << 20))])

    def batch(state):
        sid = state["next_id"]
        state["next_id"] += 2
        return A.syn_stream(state["deflater"], sid, None, raw_block=bomb)

    _flood(server, stop, stats, batch)


def oversized_header_block(server, stop, stats):
    """A SYN_STREAM that announces 16 MiB and starts sending it."""
    junk = b"\x55" * 65536

    def batch(state):
        if not state.get("sent_head"):
            state["sent_head"] = True
            return A.ctrl_lying(A.SYN_STREAM, 0, 0xFFFFFF) + struct.pack(">IIBB", 1, 0, 0, 0)
        return junk

    _flood(server, stop, stats, batch)


def tiny_header_fields(server, stop, stats):
    """As many one-byte-named, empty-valued fields as fit one block (about 6,000)."""
    def name(i):
        s = ""
        while True:
            s = "abcdefghijklmnopqrstuvwxyz"[i % 26] + s
            i //= 26
            if i == 0:
                return "x" + s
    fields = A.request_headers("/index.html") + [(name(i), "") for i in range(5500)]
    block = A.nv_block(fields)

    def batch(state):
        sid = state["next_id"]
        state["next_id"] += 2
        return A.syn_stream(state["deflater"], sid, None, raw_block=block)

    _flood(server, stop, stats, batch)


def piled_headers(server, stop, stats):
    """One stream, then HEADERS frames without end."""
    def setup(state):
        sid, frame = _open_stream(state, "/index.html", fin=False)
        state["sid"] = sid
        return frame

    fields = [("x-pile-%d" % i, "v" * 100) for i in range(50)]

    def batch(state):
        return b"".join(A.headers_frame(state["deflater"], state["sid"], fields)
                        for _ in range(20))

    _flood(server, stop, stats, batch, setup)


# ---- slow peers ---------------------------------------------------------------------------


def never_reading(server, stop, stats, connections=20, streams=50):
    """Connections that ask for large files and never read a byte."""
    socks = []
    try:
        for _ in range(connections):
            s = A.attacker_socket(server.port)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            state = {"deflater": A.Deflater(), "next_id": 1}
            A.send_all(s, b"".join(_open_stream(state, "/big.bin")[1] for _ in range(streams)))
            socks.append(s)
            _count(stats, "connections")
        stop.wait()
    finally:
        for s in socks:
            s.close()


def byte_window(server, stop, stats):
    """SPDY/3 streams whose window is opened a byte at a time."""
    def setup(state):
        out = A.settings([(7, 1)])  # INITIAL_WINDOW_SIZE 1
        for _ in range(10):
            sid, frame = _open_stream(state, "/big.bin")
            out += frame
        return out

    def batch(state):
        time.sleep(0.001)
        return b"".join(A.window_update(sid, 1) for sid in range(1, 21, 2))

    _flood(server, stop, stats, batch, setup)


def one_byte_a_second_spdy(server, stop, stats, connections=30, interval=0.25):
    """SPDY connections that send their SYN_STREAM one byte per interval."""
    d = A.Deflater()
    frame = A.syn_stream(d, 1, A.request_headers("/index.html"))
    _drip(server.port, stop, stats, frame, connections, interval)


def slowloris(server, stop, stats, connections=30, interval=0.25):
    """HTTP/1.1 requests whose headers never end: a byte per interval."""
    request = b"GET /index.html HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 100000
    _drip(server.port, stop, stats, request, connections, interval)


def _drip(port, stop, stats, payload, connections, interval):
    socks = []
    for _ in range(connections):
        try:
            socks.append([A.attacker_socket(port), 0])
            _count(stats, "connections")
        except OSError:
            _count(stats, "connect_failed")
    while not stop.is_set() and socks:
        for entry in list(socks):
            s, pos = entry
            if pos >= len(payload) or not A.send_all(s, payload[pos:pos + 1]):
                _count(stats, "closed_by_server")
                s.close()
                socks.remove(entry)
                continue
            entry[1] += 1
        stop.wait(interval)
    stats["still_open"] = len(socks)
    for s, _ in socks:
        s.close()


def stalled_tls_handshake(server, stop, stats, connections=50):
    """TLS connections that send half a ClientHello and wait."""
    hello_start = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03])
    socks = []
    for _ in range(connections):
        try:
            s = A.attacker_socket(server.tls_port)
            A.send_all(s, hello_start)
            socks.append(s)
            _count(stats, "connections")
        except OSError:
            _count(stats, "connect_failed")
    stop.wait()
    closed = 0
    for s in socks:
        if A.wait_closed(s, 0.05):
            closed += 1
        s.close()
    stats["closed_by_server"] = closed


# ---- HTTP/1.1 --------------------------------------------------------------------------------


def pipelining_flood(server, stop, stats):
    """Thousands of pipelined requests, never reading an answer."""
    batch = b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" * 2000
    while not stop.is_set():
        try:
            s = A.attacker_socket(server.port, timeout=0.5)
        except OSError:
            _count(stats, "connect_failed")
            time.sleep(0.05)
            continue
        _count(stats, "connections")
        try:
            while not stop.is_set():
                try:
                    s.sendall(batch)
                except socket.timeout:
                    _count(stats, "blocked")  # the server stopped reading: bounded
                    stop.wait(0.2)
                    break
                except OSError:
                    _count(stats, "closed_by_server")
                    break
        finally:
            s.close()


def chunk_extension_64mib(server, stop, stats):
    """A chunked body whose first chunk extension is 64 MiB long."""
    head = (b"POST /index.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"1;ext=")
    piece = b"e" * 65536
    s = A.attacker_socket(server.port, timeout=5)
    sent = 0
    try:
        A.send_all(s, head)
        while sent < (64 << 20) and not stop.is_set():
            try:
                s.sendall(piece)
            except OSError:
                break
            sent += len(piece)
        stats["extension_bytes_sent"] = sent
        s.settimeout(5)
        try:
            stats["answer"] = s.recv(4096)
        except OSError:
            stats["answer"] = b""
    finally:
        s.close()


def idle_connections(server, stop, stats, total=10000, sources=40):
    """total connections that never send a byte, spread over `sources` addresses."""
    socks = []
    per = (total + sources - 1) // sources
    for i in range(total):
        src = "127.0.0.%d" % (10 + i // per)
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.bind((src, 0))
            try:
                s.connect(("127.0.0.1", server.port))
            except BlockingIOError:
                pass
            socks.append(s)
        except OSError:
            _count(stats, "connect_failed")
            break
    stats["opened"] = len(socks)
    stats["ready"] = True  # the harness fetches once the flood is in place
    stop.wait()
    closed = 0
    for s in socks:
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    stats["closed_by_server"] = closed


def run_in_thread(attack, server, **kwargs):
    stop = threading.Event()
    stats = {}
    thread = threading.Thread(target=attack, args=(server, stop, stats), kwargs=kwargs,
                              daemon=True)
    thread.start()
    return stop, stats, thread
