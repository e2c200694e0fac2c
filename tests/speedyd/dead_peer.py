"""dead_peer.py — a SPDY/3 client that leaves speedyd mid-transfer with a half-close.

  /usr/bin/python3 dead_peer.py PORT download|upload

download: GET /large.bin, read the first 64 KiB or so, then shutdown(SHUT_WR) without
returning any window; upload: POST /upload without FIN and 16 KiB of DATA, then the same.
Either way speedyd's streams can only move with the client's help, which a closed side
never sends: speedyd must close the connection at once (it sat in CLOSE-WAIT until
--idle-timeout, 120 s). Exits 0 if speedyd's FIN arrives within 3 s, 1 otherwise.
Frames and header blocks come from tests/strict/strict_spdy.py (written from the spec).
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "strict"))
import strict_spdy as spdy  # noqa: E402

SYN_STREAM, FIN = 1, 0x01


def main():
    port, what = int(sys.argv[1]), sys.argv[2]
    codec = spdy.HeaderCodec("3")
    path, method, fin = ("/large.bin", "GET", FIN) if what == "download" else ("/upload", "POST", 0)
    block = codec.encode([(":method", method), (":path", path), (":version", "HTTP/1.1"),
                          (":host", "localhost:%d" % port), (":scheme", "http")])
    syn = spdy.control_frame(3, SYN_STREAM, fin, struct.pack(">IIH", 1, 0, 0) + block)
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(syn)
    if what == "upload":
        sock.sendall(spdy.data_frame(1, 0, b"x" * 16384))
        time.sleep(0.3)
    else:
        got = 0
        while got < 65536:  # what speedyd may send before it needs our WINDOW_UPDATE
            chunk = sock.recv(65536)
            if not chunk:
                print("dead_peer: speedyd closed before sending the first window")
                return 1
            got += len(chunk)
    sock.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + 3
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            if not sock.recv(65536):
                print("dead_peer: %s: speedyd closed the connection after the half-close" % what)
                return 0
        except socket.timeout:
            continue
        except ConnectionResetError:
            print("dead_peer: %s: speedyd reset the connection after the half-close" % what)
            return 0
    print("dead_peer: %s: speedyd kept the connection open 3 s after the client left" % what)
    return 1


if __name__ == "__main__":
    sys.exit(main())
