"""attacklib.py — the pieces every speedyd attack is built from.

A real speedyd on loopback (port 0 + --port-file, its own docroot and logs, stopped
whatever happens), SPDY/3.1 frames built byte by byte (header blocks compressed with the
SPDY/3 dictionary read from lib/dict.c, so attacks can reach the header code), attacker
sockets bound to their own loopback addresses (127.0.0.2 and up) so per-address limits
never touch the legitimate client on 127.0.0.1, the legitimate client itself
(`speedy get`), and the server's memory from /proc/PID/status.

Used by tests/attacks/run_attacks.py (asserting) and bench/attacks/run.py (measuring).
"""
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))

ATTACKER = "127.0.0.2"


def load_dict_v3():
    """The SPDY/3 zlib dictionary, parsed from lib/dict.c (1,423 bytes)."""
    with open(os.path.join(SOURCE_ROOT, "lib", "dict.c")) as f:
        text = f.read()
    body = text.split("spdy_hdblock_dict_v3[] = {", 1)[1].split("};", 1)[0]
    data = bytes(int(h, 16) for h in re.findall(r"0x([0-9a-fA-F]{2})", body))
    if len(data) != 1423 or zlib.adler32(data) != 0xE3C6A7C2:
        raise RuntimeError("lib/dict.c: unexpected SPDY/3 dictionary")
    return data


DICT_V3 = load_dict_v3()

# ---- frames (SPDY/3 and 3.1 layout) ------------------------------------------------

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS = 1, 2, 3, 4
PING, GOAWAY, HEADERS, WINDOW_UPDATE = 6, 7, 8, 9
FLAG_FIN = 1


def ctrl(ftype, flags, payload, version=3):
    return struct.pack(">HHI", 0x8000 | version, ftype, (flags << 24) | len(payload)) + payload


def ctrl_lying(ftype, flags, length, version=3):
    """A control frame header whose length says what the attack wants."""
    return struct.pack(">HHI", 0x8000 | version, ftype, (flags << 24) | length)


def data(stream_id, flags, payload=b""):
    return struct.pack(">II", stream_id & 0x7FFFFFFF, (flags << 24) | len(payload)) + payload


def ping(ping_id):
    return ctrl(PING, 0, struct.pack(">I", ping_id))


def settings(entries, flags=0):
    body = struct.pack(">I", len(entries))
    for sid, value in entries:
        body += struct.pack(">II", sid & 0xFFFFFF, value)
    return ctrl(SETTINGS, flags, body)


def window_update(stream_id, delta):
    return ctrl(WINDOW_UPDATE, 0, struct.pack(">II", stream_id, delta))


def rst(stream_id, status):
    return ctrl(RST_STREAM, 0, struct.pack(">II", stream_id, status))


def nv_block(headers):
    out = struct.pack(">I", len(headers))
    for name, value in headers:
        name = name.encode() if isinstance(name, str) else name
        value = value.encode() if isinstance(value, str) else value
        out += struct.pack(">I", len(name)) + name + struct.pack(">I", len(value)) + value
    return out


def request_headers(path, host="127.0.0.1", method="GET", extra=()):
    return [(":method", method), (":path", path), (":version", "HTTP/1.1"),
            (":host", host), (":scheme", "http")] + list(extra)


class Deflater:
    """The peer's half of a session's shared header compression context."""

    def __init__(self):
        self.z = zlib.compressobj(9, zlib.DEFLATED, 11, 8, zlib.Z_DEFAULT_STRATEGY, DICT_V3)

    def block(self, raw):
        return self.z.compress(raw) + self.z.flush(zlib.Z_SYNC_FLUSH)


def syn_stream(deflater, stream_id, headers, fin=True, priority=3, raw_block=None):
    block = deflater.block(nv_block(headers) if raw_block is None else raw_block)
    payload = struct.pack(">IIBB", stream_id, 0, priority << 5, 0) + block
    return ctrl(SYN_STREAM, FLAG_FIN if fin else 0, payload)


def headers_frame(deflater, stream_id, headers, fin=False):
    block = deflater.block(nv_block(headers))
    return ctrl(HEADERS, FLAG_FIN if fin else 0, struct.pack(">I", stream_id) + block)


def parse_frames(buf):
    """Splits bytes into (is_control, type_or_stream, flags, payload); returns (frames, rest)."""
    frames = []
    pos = 0
    while len(buf) - pos >= 8:
        w1, w2 = struct.unpack_from(">II", buf, pos)
        length = w2 & 0xFFFFFF
        if len(buf) - pos - 8 < length:
            break
        payload = buf[pos + 8:pos + 8 + length]
        if w1 & 0x80000000:
            frames.append((True, w1 & 0xFFFF, w2 >> 24, payload))
        else:
            frames.append((False, w1, w2 >> 24, payload))
        pos += 8 + length
    return frames, buf[pos:]


# ---- sockets ------------------------------------------------------------------------


def attacker_socket(port, source=ATTACKER, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def send_all(s, payload):
    """Sends what the server takes; returns False once it is gone."""
    try:
        s.sendall(payload)
        return True
    except OSError:
        return False


def drain(s, max_bytes=1 << 22):
    """Reads what is there without waiting; returns (bytes, closed)."""
    got = bytearray()
    s.setblocking(False)
    try:
        while len(got) < max_bytes:
            chunk = s.recv(65536)
            if not chunk:
                return bytes(got), True
            got += chunk
    except BlockingIOError:
        pass
    except OSError:
        return bytes(got), True
    finally:
        s.setblocking(True)
    return bytes(got), False


def wait_closed(s, deadline_s):
    """Reads (and discards) until the server closes; True if it did within the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            if not s.recv(65536):
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


# ---- the server ---------------------------------------------------------------------

SMALL_PAGE = b"<!doctype html><title>speedy</title>" + b"x" * 2000
BIG_FILE_BYTES = 8 * 1024 * 1024


def make_certs(directory):
    """A self-signed P-256 certificate for 127.0.0.1 (openssl CLI), or None without it."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key, 0o600)
    return cert, key


class Server:
    """One speedyd on 127.0.0.1 (plaintext; TLS too with tls=True)."""

    def __init__(self, speedyd, extra_args=(), tls=False, workdir=None):
        self.dir = tempfile.mkdtemp(prefix="speedy-attack-", dir=workdir)
        self.docroot = os.path.join(self.dir, "www")
        os.mkdir(self.docroot)
        with open(os.path.join(self.docroot, "index.html"), "wb") as f:
            f.write(SMALL_PAGE)
        with open(os.path.join(self.docroot, "big.bin"), "wb") as f:
            block = bytes(range(256)) * 4096
            for _ in range(BIG_FILE_BYTES // len(block)):
                f.write(block)
        self.port_file = os.path.join(self.dir, "ports")
        self.error_log = os.path.join(self.dir, "error.log")
        self.access_log = os.path.join(self.dir, "access.log")
        # One worker: the process whose memory (/proc/PID/status) the checks read is the
        # one that serves (with several, the master only forwards signals).
        args = [speedyd, "--workers", "1", "--listen", "127.0.0.1:0", "--docroot", self.docroot,
                "--port-file", self.port_file, "--error-log", self.error_log,
                "--access-log", self.access_log, "--no-gzip"]
        self.tls = None
        if tls:
            self.tls = make_certs(self.dir)
            if self.tls is None:
                raise RuntimeError("openssl not found")
            args += ["--listen", "127.0.0.1:0,tls", "--cert", self.tls[0], "--key", self.tls[1]]
        args += list(extra_args)
        env = dict(os.environ)
        # ASan keeps freed memory in quarantine (256 MiB by default), which would read as
        # the server's peak; a small one keeps the RSS figures about our allocations.
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=16"
                               ":thread_local_quarantine_size_kb=64").lstrip(":")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        end = time.monotonic() + 20
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None:
                raise RuntimeError("speedyd exited at start: %s" %
                                   self.proc.stderr.read().decode(errors="replace"))
            if time.monotonic() > end:
                raise RuntimeError("speedyd did not write --port-file")
            time.sleep(0.02)
        with open(self.port_file) as f:
            ports = [int(line) for line in f if line.strip()]
        self.port = ports[0]
        self.tls_port = ports[1] if tls else None

    def alive(self):
        return self.proc.poll() is None

    def status_kb(self, field):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def peak_rss_kb(self):
        return self.status_kb("VmHWM")

    def rss_kb(self):
        return self.status_kb("VmRSS")

    def reset_peak(self):
        """Makes VmHWM start again from the current RSS (Linux clear_refs 5)."""
        try:
            with open("/proc/%d/clear_refs" % self.proc.pid, "w") as f:
                f.write("5")
        except OSError:
            pass

    def errors(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        """SIGTERM, then SIGKILL; returns the exit status and removes the files."""
        status = self.proc.poll()
        if status is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                status = self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                status = self.proc.wait()
        self.stderr_text = self.proc.stderr.read().decode(errors="replace")
        self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return status


def legit_get(speedy, url, http1=False, timeout_s=20, insecure=False, proto=None):
    """One `speedy get` (--proto PROTO when given: h2c, h2); returns (ok, seconds, stderr).
    seconds is what the client measured itself (its summary's connect time plus the
    request's total), not the wall time of the process: under a flood from this same
    Python process (the attacker is a thread) spawning and reaping the child took 0.5-1 s
    now and then while the fetch inside took a millisecond (strace of the child)."""
    args = [speedy, "get", "--max-time", str(int(timeout_s)), "-o", "/dev/null"]
    if http1:
        args.append("--http1")
    if proto:
        args += ["--proto", proto]
    if insecure:
        args.append("-k")
    args.append(url)
    start = time.monotonic()
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout_s + 5)
    except subprocess.TimeoutExpired:
        return False, time.monotonic() - start, "timed out"
    wall = time.monotonic() - start
    text = done.stderr.decode(errors="replace")
    connect = re.search(r", connect ([0-9.]+) ms,", text)
    total = re.search(r" total +([0-9.]+) ms", text)
    if done.returncode != 0:
        return False, wall, text
    if connect is None or total is None:
        return False, wall, "no connect and total times in speedy get's summary:\n" + text
    return True, (float(connect.group(1)) + float(total.group(1))) / 1000.0, text


def http1_exchange(port, request, read_s=5.0, source=ATTACKER):
    """Sends raw HTTP/1.1 bytes; returns everything read until close or read_s."""
    s = attacker_socket(port, source)
    try:
        send_all(s, request)
        got = bytearray()
        end = time.monotonic() + read_s
        while time.monotonic() < end:
            s.settimeout(max(0.05, end - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not chunk:
                break
            got += chunk
        return bytes(got)
    finally:
        s.close()


def status_of(response):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    return int(m.group(1)) if m else None
