#!/usr/bin/env python3
"""liar.py MODE PORT_FILE [CERT KEY] — a tiny HTTP/1.1 keep-alive server on 127.0.0.1 that lies, so
the tests can show that `speedy bench` catches it. Every response to any path:
  size     every 2nd response has a body one byte longer (and a matching Content-Length)
  content  every 2nd response has the same size but a different last byte
  short    Content-Length 1000, 500 bytes sent, then the connection is closed
  interim  a 103 Early Hints (and every 2nd time a 100 too) before each 200, whose body is
           right: not a lie, the case a client must skip (RFC 9110 15.2)
  eof      no Content-Length: the body ends with the connection (RFC 9112 6.3), closed
           after every response — not a lie either, a client must read to the end
  eof-cut  as eof, but over TLS the connection ends without close_notify after half the
           body: a truncation a client must not take for the end
With CERT and KEY it speaks TLS (ALPN http/1.1), and eof ends with close_notify.
Runs until killed (the test kills it); every socket has a timeout."""
import socketserver
import ssl
import sys
import threading

MODE = sys.argv[1]
BODY = bytes(range(256)) * 4  # 1 KiB
counter = 0
lock = threading.Lock()


class Handler(socketserver.StreamRequestHandler):
    timeout = 30

    def handle(self):
        global counter
        while True:
            line = self.rfile.readline(8192)
            if not line:
                return
            while True:  # headers
                h = self.rfile.readline(8192)
                if not h or h in (b"\r\n", b"\n"):
                    break
            with lock:
                counter += 1
                n = counter
            body = BODY
            if MODE == "size" and n % 2 == 0:
                body = BODY + b"x"
            elif MODE == "content" and n % 2 == 0:
                body = BODY[:-1] + b"x"
            length = 1000 if MODE == "short" else len(body)
            head = ("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    "Content-Length: %d\r\n\r\n" % length).encode()
            if MODE in ("eof", "eof-cut"):
                if MODE == "eof-cut":
                    body = body[:len(body) // 2]
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream"
                                 b"\r\n\r\n" + body)
                self.wfile.flush()
                if TLS is not None and MODE == "eof":
                    self.request.unwrap()  # close_notify
                return
            if MODE == "short":
                self.wfile.write(head + body[:500])
                self.wfile.flush()
                return
            if MODE == "interim":
                if n % 2 == 0:
                    head = b"HTTP/1.1 100 Continue\r\n\r\n" + head
                head = b"HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n" + head
            self.wfile.write(head + body)
            self.wfile.flush()


TLS = None
if len(sys.argv) > 4:
    TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    TLS.load_cert_chain(sys.argv[3], sys.argv[4])
    TLS.set_alpn_protocols(["http/1.1"])


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        sock, addr = super().get_request()
        if TLS is not None:
            sock.settimeout(30)
            sock = TLS.wrap_socket(sock, server_side=True)
        return sock, addr


with Server(("127.0.0.1", 0), Handler) as server:
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    import os
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    server.serve_forever()
