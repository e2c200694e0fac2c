#!/usr/bin/python3
# h2_server.py DIR PORT_FILE [--tls CERT KEY] [--goaway-after N] — a strict HTTP/2 server
# for the client tests, on python3-h2 (an implementation this project did not write) and
# RFC 9113's rules as h2 enforces them (header validation on, in both directions).
#
#   GET /NAME        the file DIR/NAME (200, content-length), 404 when missing
#   POST /upload     200 with the sha256 (hex) of the request body as the body
#   GET /reset       RST_STREAM INTERNAL_ERROR instead of a response (RFC 9113 6.4)
#   --goaway-after N N requests answered on a connection, later ones left unanswered;
#                    once those N responses are sent, GOAWAY NO_ERROR naming the last
#                    stream answered (6.8: the client may retry the others elsewhere), and
#                    the connection is closed
#
# Listens on 127.0.0.1, an ephemeral port written to PORT_FILE; h2c (prior knowledge)
# without --tls, ALPN "h2" with it. One thread per connection. Runs until killed.
import hashlib
import os
import socket
import ssl
import sys
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events

args = sys.argv[1:]
docroot, port_file = args[0], args[1]
tls = None
goaway_after = 0
i = 2
while i < len(args):
    if args[i] == "--tls":
        tls = (args[i + 1], args[i + 2])
        i += 3
    elif args[i] == "--goaway-after":
        goaway_after = int(args[i + 1])
        i += 2
    else:
        sys.exit("unknown argument " + args[i])


def serve(sock):
    config = h2.config.H2Configuration(client_side=False, header_encoding=None,
                                       validate_inbound_headers=True,
                                       validate_outbound_headers=True)
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    requests = {}  # stream id -> [headers, body]
    pending = {}  # stream id -> (remaining body bytes) waiting for window
    answered = 0
    last_answered = 0
    going_away = False

    def respond(stream_id, status, body):
        nonlocal answered, last_answered
        conn.send_headers(stream_id, [(b":status", str(status).encode()),
                                      (b"content-length", str(len(body)).encode()),
                                      (b"server", b"python3-h2 test")],
                          end_stream=len(body) == 0)
        if body:
            pending[stream_id] = body
        answered += 1
        last_answered = max(last_answered, stream_id)

    def flush_bodies():
        for stream_id in list(pending):
            body = pending[stream_id]
            while body:
                window = min(conn.local_flow_control_window(stream_id),
                             conn.max_outbound_frame_size)
                if window <= 0:
                    break
                chunk, body = body[:window], body[window:]
                conn.send_data(stream_id, chunk, end_stream=not body)
            if body:
                pending[stream_id] = body
            else:
                del pending[stream_id]

    def handle(stream_id):
        headers, body = requests.pop(stream_id)
        if goaway_after and answered >= goaway_after:
            return  # not processed: the GOAWAY will say so
        method, path = headers.get(b":method"), headers.get(b":path", b"")
        if path == b"/reset":
            conn.reset_stream(stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
            return
        if method == b"POST" and path == b"/upload":
            respond(stream_id, 200, hashlib.sha256(bytes(body)).hexdigest().encode())
            return
        name = path.decode("latin-1").split("?")[0].lstrip("/")
        file = os.path.join(docroot, name)
        if method in (b"GET", b"HEAD") and name and "/" not in name and os.path.isfile(file):
            with open(file, "rb") as f:
                data = f.read()
            respond(stream_id, 200, data if method == b"GET" else b"")
        else:
            respond(stream_id, 404, b"not found\n")

    sock.settimeout(20)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = [dict(event.headers), bytearray()]
                    if event.stream_ended:
                        handle(event.stream_id)
                elif isinstance(event, h2.events.DataReceived):
                    if event.stream_id in requests:
                        requests[event.stream_id][1] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    if event.stream_id in requests:
                        handle(event.stream_id)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    sock.sendall(conn.data_to_send())
                    return
            flush_bodies()
            # h2 sends nothing after GOAWAY: the answered responses go out first
            if goaway_after and answered >= goaway_after and not pending and not going_away:
                going_away = True
                conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR,
                                      last_stream_id=last_answered)
            sock.sendall(conn.data_to_send())
            if going_away:
                break
    except (OSError, h2.exceptions.ProtocolError):
        pass
    finally:
        try:
            sock.sendall(conn.data_to_send())
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(2)
            while sock.recv(65536):
                pass
        except OSError:
            pass
        sock.close()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
context = None
if tls:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls[0], tls[1])
    context.set_alpn_protocols(["h2"])
with open(port_file + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    client, _ = listener.accept()
    if context:
        try:
            client = context.wrap_socket(client, server_side=True)
        except (ssl.SSLError, OSError):
            client.close()
            continue
        if client.selected_alpn_protocol() != "h2":
            client.close()
            continue
    threading.Thread(target=serve, args=(client,), daemon=True).start()
