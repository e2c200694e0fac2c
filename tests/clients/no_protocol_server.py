#!/usr/bin/env python3
"""no_protocol_server.py CERT KEY PORT_FILE — a TLS 1.3 server on 127.0.0.1 that answers
neither ALPN nor NPN and ends every connection at once.

For each connection it reads the ClientHello, sends its whole handshake flight (ServerHello
to Finished: the client's handshake completes, with no protocol chosen) and closes without
waiting for the client's Finished. The client gets our FIN, then writes its Finished and
request to a closed socket, whose RST finds the client's socket half closed (CLOSE_WAIT):
the kernel records EPIPE, and the client's next write (its close_notify) raises SIGPIPE,
which kills a client that does not ignore it (status 141). The port is written to
PORT_FILE once listening. Runs until killed.
"""
import os
import socket
import ssl
import sys


def serve_one(conn, context):
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_side=True)
    conn.settimeout(5)
    while True:
        data = conn.recv(65536)
        if not data:
            return
        incoming.write(data)
        try:
            tls.do_handshake()
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLError:
            return
        flight = outgoing.read()
        if flight:
            conn.sendall(flight)
            return


def main():
    cert, key, port_file = sys.argv[1:4]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(cert, key)  # no set_alpn_protocols, no NPN: nothing is chosen
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    while True:
        conn, _ = listener.accept()
        try:
            serve_one(conn, context)
        except OSError:
            pass
        conn.close()


if __name__ == "__main__":
    main()
