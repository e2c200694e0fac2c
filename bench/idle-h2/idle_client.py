#!/usr/bin/python3
"""idle_client.py — holds N idle HTTP/2 connections to one server, for bench/idle-h2/run.

  idle_client.py --port P --connections N [--tls --ca FILE] [--path /x] [--sources K]
                 --ready-file F [--hold S]

Each connection: TCP (TLS with ALPN h2 when --tls), the client preface and SETTINGS, one
GET of --path answered 200 with its whole body, the server's SETTINGS acknowledged and
ours acknowledged by it; then it stays open and idle, still answering whatever the
server sends (PING, SETTINGS). Connections come from --sources addresses 127.0.1.1,
127.0.1.2, ... in turn (so that neither one address's ephemeral ports nor a per-address
limit decides the count), at most 256 being set up at once. When all are idle the
client writes "ready N" to --ready-file and holds them --hold seconds (or until killed);
a connection that fails is an error: the client prints why and exits 1 without writing
the file. Written with python3-h2 (Debian python3-h2, under /usr/bin/python3)."""
import argparse
import asyncio
import resource
import ssl
import sys

import h2.config
import h2.connection
import h2.events


class Failed(Exception):
    pass


class IdleConnection:
    def __init__(self, reader, writer, authority, path):
        self.reader, self.writer = reader, writer
        self.authority, self.path = authority, path
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.status = None
        self.done = False
        self.settings_acked = False
        self.server_settings = False

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)

    def handle(self, events):
        for e in events:
            if isinstance(e, h2.events.ResponseReceived):
                self.status = dict(e.headers).get(b":status")
            elif isinstance(e, h2.events.DataReceived):
                self.h2.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
            elif isinstance(e, h2.events.StreamEnded):
                self.done = True
            elif isinstance(e, h2.events.StreamReset):
                raise Failed(f"stream reset ({e.error_code})")
            elif isinstance(e, h2.events.ConnectionTerminated):
                raise Failed(f"GOAWAY ({e.error_code})")
            elif isinstance(e, h2.events.SettingsAcknowledged):
                self.settings_acked = True
            elif isinstance(e, h2.events.RemoteSettingsChanged):
                self.server_settings = True

    async def read_some(self):
        data = await self.reader.read(65536)
        if not data:
            raise Failed("the server closed the connection")
        self.handle(self.h2.receive_data(data))
        self.flush()

    async def setup(self):
        self.h2.initiate_connection()
        stream_id = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream_id, [(":method", "GET"), (":scheme", "http"),
                                         (":authority", self.authority), (":path", self.path)],
                             end_stream=True)
        self.flush()
        while not (self.done and self.settings_acked and self.server_settings):
            await self.read_some()
        if self.status != b"200":
            raise Failed(f"status {self.status!r}")

    async def idle(self):
        try:
            while True:
                await self.read_some()
        except (Failed, OSError):
            return  # at the end of the run the server or the client closes


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--connections", type=int, required=True)
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--ca")
    ap.add_argument("--path", default="/")
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--hold", type=float, default=3600)
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.connections + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(want, soft)), hard))
        if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < want:
            print(f"idle_client: {want} file descriptors needed, the limit is {hard}", file=sys.stderr)
            return 1

    context = None
    if args.tls:
        context = ssl.create_default_context(cafile=args.ca)
        context.set_alpn_protocols(["h2"])
    gate = asyncio.Semaphore(256)
    conns = []
    errors = []

    async def open_one(i):
        source = f"127.0.1.{1 + i % args.sources}"
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(
                    args.host, args.port, ssl=context, local_addr=(source, 0),
                    server_hostname="localhost" if args.tls else None), 30)
                if args.tls and writer.get_extra_info("ssl_object").selected_alpn_protocol() != "h2":
                    raise Failed("ALPN did not choose h2")
                conn = IdleConnection(reader, writer, f"localhost:{args.port}", args.path)
                await asyncio.wait_for(conn.setup(), 30)
            except (Failed, OSError, asyncio.TimeoutError, ssl.SSLError) as e:
                errors.append(f"connection {i} from {source}: {type(e).__name__}: {e}")
                return
        conns.append(conn)

    await asyncio.gather(*(open_one(i) for i in range(args.connections)))
    if errors:
        print(f"idle_client: {len(errors)} of {args.connections} connections failed; first: {errors[0]}",
              file=sys.stderr)
        return 1
    idlers = [asyncio.ensure_future(c.idle()) for c in conns]
    with open(args.ready_file + ".tmp", "w") as f:
        f.write(f"ready {len(conns)}\n")
    import os
    os.rename(args.ready_file + ".tmp", args.ready_file)
    await asyncio.sleep(args.hold)
    for c in conns:
        c.writer.close()
    for t in idlers:
        t.cancel()
    return 0


sys.exit(asyncio.run(main()))
