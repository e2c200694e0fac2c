#!/usr/bin/env python3
"""pipeline.py PORT PATH... — HTTP/1.1 pipelining over a raw socket.

Sends every request in one write (the last with Connection: close), reads until the
server closes, and prints one line per response in the order received:
"STATUS LENGTH SHA256". Exits 1 on a malformed response or a timeout (10 s).
"""
import hashlib
import socket
import sys

port, paths = int(sys.argv[1]), sys.argv[2:]
reqs = []
for i, p in enumerate(paths):
    last = "Connection: close\r\n" if i == len(paths) - 1 else ""
    reqs.append("GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n" % (p, last))
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall("".join(reqs).encode())
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
pos = 0
for _ in paths:
    end = data.find(b"\r\n\r\n", pos)
    if end < 0:
        sys.exit("truncated response head")
    head = data[pos:end].decode("latin-1").split("\r\n")
    status = head[0].split(" ")[1]
    length = 0
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = data[end + 4:end + 4 + length]
    if len(body) != length:
        sys.exit("truncated body")
    print(status, length, hashlib.sha256(body).hexdigest())
    pos = end + 4 + length
if pos != len(data):
    sys.exit("%d extra bytes after the last response" % (len(data) - pos))
