#!/usr/bin/python3
"""refuser.py MODE PORT_FILE COUNT_FILE — an HTTP/2 (h2c, prior knowledge) server on
127.0.0.1, written with python3-h2, that refuses streams the ways RFC 9113 8.7 allows, so
that the tests can show that `speedy bench` sends unprocessed requests again:
  goaway  the first connection answers its first stream only, then sends GOAWAY with
          last_stream_id 1 (the other streams were not processed) and closes; every
          later connection answers everything
  refuse  every third stream is reset with REFUSED_STREAM, the others are answered
Every answer is 200 with a 5-byte body; COUNT_FILE gets one line per answered stream (the
tests compare it with what the client reports). Runs until killed; sockets time out."""
import socket
import sys
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events

MODE, PORT_FILE, COUNT_FILE = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
connections = 0
streams_seen = 0


def answer(conn, stream_id, log):
    conn.send_headers(stream_id, [(":status", "200"), ("content-length", "5")])
    conn.send_data(stream_id, b"hello", end_stream=True)
    log.write(f"{stream_id}\n")
    log.flush()


def serve(sock, first):
    sock.settimeout(30)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    with open(COUNT_FILE, "a") as log:
        while True:
            try:
                data = sock.recv(65536)
            except (socket.timeout, ConnectionResetError):
                return
            if not data:
                return
            events = conn.receive_data(data)
            requests = [e.stream_id for e in events if isinstance(e, h2.events.RequestReceived)]
            if MODE == "goaway" and first and requests:
                # Everything sent so far arrived in this read or later ones; only stream 1
                # is answered, whatever else came with it.
                if requests[0] == 1:
                    answer(conn, 1, log)
                conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=1)
                sock.sendall(conn.data_to_send())
                sock.shutdown(socket.SHUT_WR)
                try:  # let the client read it all before the socket goes
                    while sock.recv(65536):
                        pass
                except (socket.timeout, ConnectionResetError):
                    pass
                return
            for stream_id in requests:
                global streams_seen
                with lock:
                    streams_seen += 1
                    refuse = MODE == "refuse" and streams_seen % 3 == 0
                if refuse:
                    conn.reset_stream(stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                else:
                    answer(conn, stream_id, log)
            out = conn.data_to_send()
            if out:
                sock.sendall(out)


def main():
    global connections
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(f"{server.getsockname()[1]}\n")
    import os
    os.rename(PORT_FILE + ".tmp", PORT_FILE)
    while True:
        sock, _ = server.accept()
        with lock:
            connections += 1
            first = connections == 1
        threading.Thread(target=serve, args=(sock, first), daemon=True).start()


main()
