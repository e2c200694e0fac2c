#!/usr/bin/env python3
"""worker_spread.py — which speedyd worker accepted which connection.

  worker_spread.py PORT PID... : opens 24 HTTP/1.1 and 24 plaintext SPDY/3.1 connections
  to 127.0.0.1:PORT, makes each one answer (an HTTP/1.1 response; the server's first
  SPDY frame), keeps them open, and finds the process holding the server side of each
  (its socket inode in /proc/net/tcp, then /proc/PID/fd). Prints one line per kind:
  "http1 N1 N2 ..." and "spdy N1 N2 ..." with the count per PID, in argument order.
"""
import os
import socket
import sys

port = int(sys.argv[1])
pids = [int(p) for p in sys.argv[2:]]


def recv_some(s):
    s.settimeout(10)
    data = s.recv(4096)
    if not data:
        raise SystemExit("connection closed before an answer")
    return data


def open_http1():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
    if not recv_some(s).startswith(b"HTTP/1.1 "):
        raise SystemExit("not an HTTP/1.1 answer")
    return s


def open_spdy():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    # SPDY/3 SETTINGS with no entries: control bit, version 3, type 4, length 4.
    s.sendall(bytes([0x80, 0x03, 0x00, 0x04, 0, 0, 0, 4, 0, 0, 0, 0]))
    head = recv_some(s)
    if head[:2] != b"\x80\x03":
        raise SystemExit("not a SPDY/3 frame: %r" % head[:8])
    return s


def server_inodes():
    """(client port) -> inode of the server side, from /proc/net/tcp."""
    found = {}
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.split(":")[1], 16) == port:
                found[int(remote.split(":")[1], 16)] = inode
    return found


def owner_of(inodes_wanted):
    owners = {}
    for pid in pids:
        fd_dir = "/proc/%d/fd" % pid
        for fd in os.listdir(fd_dir):
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target.startswith("socket:["):
                inode = target[8:-1]
                if inode in inodes_wanted:
                    owners[inode] = pid
    return owners


kinds = {"http1": [open_http1() for _ in range(24)], "spdy": [open_spdy() for _ in range(24)]}
table = server_inodes()
for kind, socks in kinds.items():
    inodes = [table.get(s.getsockname()[1]) for s in socks]
    owners = owner_of(set(i for i in inodes if i))
    counts = [sum(1 for i in inodes if owners.get(i) == pid) for pid in pids]
    print(kind, " ".join(str(c) for c in counts))
for socks in kinds.values():
    for s in socks:
        s.close()
