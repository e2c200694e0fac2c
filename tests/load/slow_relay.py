#!/usr/bin/python3
"""slow_relay.py — a TCP relay for the tests of `speedy load --chromium-sockets`: listens on
one loopback port per target port, accepts at once (the TCP handshake is quick), waits
DELAY ms before it connects to the target and starts relaying, so that a TLS handshake
through it takes at least that long; a client that hangs up meanwhile is never relayed.
Logs one JSON line per accepted connection ({"port_index": I, "relayed": bool}).

  slow_relay.py --delay MS --log FILE TARGET_PORT...

Prints {"ports": [...]} once listening; exits when stdin closes or after 60 s.
"""
import argparse
import asyncio
import json
import sys


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


def serve(index, target, delay, log):
    async def on_client(reader, writer):
        relayed = False
        try:
            # The client's first flight waits here; EOF meanwhile: it gave the attempt up.
            loop = asyncio.get_running_loop()
            deadline, early = loop.time() + delay / 1000, b""
            while (left := deadline - loop.time()) > 0:
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), left)
                except asyncio.TimeoutError:
                    break
                if not chunk:
                    return
                early += chunk
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target)
            relayed = True
            if early:
                up_writer.write(early)
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        except (ConnectionError, OSError):
            pass
        finally:
            log.write(json.dumps({"port_index": index, "relayed": relayed}) + "\n")
            log.flush()
            writer.close()

    return on_client


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("targets", type=int, nargs="+")
    a = ap.parse_args()
    log = open(a.log, "a")
    servers = []
    for i, target in enumerate(a.targets):
        servers.append(await asyncio.start_server(serve(i, target, a.delay, log), "127.0.0.1", 0))
    ports = [s.sockets[0].getsockname()[1] for s in servers]
    print(json.dumps({"ports": ports}), flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    await asyncio.wait([stdin_closed], timeout=60)


if __name__ == "__main__":
    asyncio.run(main())
