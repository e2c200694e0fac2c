#!/usr/bin/python3
"""strict_spdy.py — a strict SPDY/2, SPDY/3 and SPDY/3.1 endpoint written from the
specification text (the Chromium drafts 2, 3 and 3.1 and draft-mbelshe-httpbis-spdy-00),
not from speedy's C code. Standard library only.

It sends exactly and only what the chosen version defines and checks strictly what it
receives: frame layout (lengths, flags, versions, reserved bits), header blocks through
ONE zlib context per direction primed with the version's dictionary, the version's
header names, stream states, and flow control:
  SPDY/2    no flow control: never a WINDOW_UPDATE, either way;
  SPDY/3    per-stream windows only: a WINDOW_UPDATE for stream 0 is a protocol error;
  SPDY/3.1  per-stream and per-session windows, both 64 KiB at the start.
The peer must never exceed a window we announced; we never exceed one it announced.
A stall (no bytes for --stall seconds while work is pending) is reported with the
windows and the last frames sent and received, never waited out.

  strict_spdy.py client --version V --connect HOST:PORT [--tls --ca FILE] --get PATH...
  strict_spdy.py server --version V --docroot DIR [--tls CERT KEY] [--sessions N]
  strict_spdy.py dictionaries --spec-dir DIR
Run with --help for every option. Exit status: 0 clean, 1 a failure or a violation by
the peer, 2 bad usage. tests/strict/README.md says how the tests use it.

This file is the command line (and the `dictionaries` check); the peer itself is the
package beside it, spdy_peer/ (see its __init__.py). Other scripts may `import
strict_spdy` for the frame and header-block helpers it re-exports.
"""
import argparse
import os
import re
import sys
import zlib

# The package lives beside this file: found whatever the working directory, and also when
# Python runs without the script's directory on sys.path (python3 -I, -P).
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
# Tests run from the source tree: leave no __pycache__ in it.
sys.dont_write_bytecode = True

from spdy_peer.client import run_client  # noqa: E402
from spdy_peer.server import run_server  # noqa: E402
from spdy_peer.wire import DEFAULT_WINDOW, DICT_V2, DICT_V3, MAX_WINDOW, VERSIONS  # noqa: E402
# For scripts that import strict_spdy (tests/speedyd/dead_peer.py).
from spdy_peer.wire import HeaderCodec, control_frame, data_frame  # noqa: E402,F401


# ---- dictionaries check ------------------------------------------------------------

def check_dictionaries(opts):
    """Compares the embedded dictionaries with the specification text."""
    ok = True
    with open(os.path.join(opts.spec_dir, "draft-mbelshe-httpbis-spdy-00.txt")) as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if "SPDY_dictionary_txt[]" in line)
    v3 = bytearray()
    for line in lines[start + 1:]:
        if "};" in line:
            break
        if re.match(r"\s+0x", line):
            code = line.split("\\\\")[0]
            v3 += bytes(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", code))
    with open(os.path.join(opts.spec_dir, "NOTES.md")) as f:
        notes = f.read()
    m = re.search(r"## The SPDY/2 zlib dictionary.*?```\n(.*?)```", notes, re.S)
    v2 = m.group(1).replace("\n", "").encode() + b"\x00" if m else b""
    for name, ours, spec in (("SPDY/2", DICT_V2, v2), ("SPDY/3", DICT_V3, bytes(v3))):
        same = ours == spec
        ok = ok and same
        print("%s dictionary: embedded %d bytes adler32 %08x, specification %d bytes adler32 "
              "%08x: %s" % (name, len(ours), zlib.adler32(ours), len(spec), zlib.adler32(spec),
                            "identical" if same else "DIFFERENT"))
    return 0 if ok else 1


# ---- options -------------------------------------------------------------------------

def positive_int(text):
    value = int(text, 0)
    if value < 1 or value > MAX_WINDOW:
        raise argparse.ArgumentTypeError("%s is not within 1 and 2^31-1" % text)
    return value


def main(argv):
    parser = argparse.ArgumentParser(
        prog="strict_spdy.py",
        description="A strict SPDY/2, /3, /3.1 endpoint from the specification.")
    sub = parser.add_subparsers(dest="mode", required=True)

    def common(p):
        p.add_argument("--version", choices=VERSIONS, required=True,
                       help="SPDY version to speak (3 and 3.1 both carry version 3 on the wire)")
        p.add_argument("--window", type=positive_int, default=None,
                       help="announce this stream window with SETTINGS_INITIAL_WINDOW_SIZE "
                            "(SPDY/3, 3.1; default: announce nothing, i.e. 64 KiB)")
        p.add_argument("--session-window", type=positive_int, default=None,
                       help="SPDY/3.1: raise the session window to this size with a "
                            "WINDOW_UPDATE for stream 0 at the start (default: stay at 64 KiB)")
        p.add_argument("--update-delay", type=float, default=0.02,
                       help="send each WINDOW_UPDATE this many seconds after the bytes it "
                            "returns were consumed, so that a sender overstepping a window is "
                            "caught, not excused by an update already on its way (default 0.02)")
        p.add_argument("--stall", type=float, default=5.0,
                       help="seconds without a byte from the peer while work is pending "
                            "that count as a stall (default 5)")
        p.add_argument("--timeout", type=float, default=30.0,
                       help="limit for the whole run in seconds (default 30)")
        p.add_argument("--tolerate-v2-window-update", action="store_true",
                       help="SPDY/2: count WINDOW_UPDATEs from the peer under 'tolerated' "
                            "instead of failing (draft 2 tells a receiver to ignore unknown "
                            "control frames; the peer must still not wait for ours)")
        p.add_argument("--json", default=None,
                       help="write the JSON summary here ('-': stdout; server: one line per "
                            "session, appended)")

    c = sub.add_parser("client", help="connect, send requests on one session, check the answers")
    common(c)
    c.add_argument("--connect", required=True, metavar="HOST:PORT")
    c.add_argument("--tls", action="store_true",
                   help="TLS with ALPN offering only the version's id")
    c.add_argument("--ca",
                   help="CA file to verify the server (default with --tls: no verification)")
    c.add_argument("--servername", help="TLS server name (default: the --connect host)")
    c.add_argument("--host", help=":host / host header (default: the --connect value)")
    c.add_argument("--get", action="append", default=[], metavar="PATH",
                   help="GET PATH; repeatable, all concurrent on the one session")
    c.add_argument("--post", action="append", default=[], nargs=2, metavar=("PATH", "FILE"),
                   help="POST the contents of FILE to PATH; repeatable")
    c.add_argument("--linger", type=float, default=0.3,
                   help="after the last answer and our GOAWAY, keep reading this long "
                        "(default 0.3)")
    c.add_argument("--connect-timeout", type=float, default=5.0)
    c.add_argument("--silence-note", type=float, default=0.5,
                   help="note (without failing) a pause of the peer this long or longer "
                        "while streams are unfinished (default 0.5 s)")
    c.add_argument("--keep-bodies", action="store_true",
                   help="keep bodies in memory (needed for --show-body)")
    c.add_argument("--show-body", dest="show_body_max", type=int, default=0, metavar="BYTES",
                   help="put bodies of at most BYTES into the JSON (implies --keep-bodies)")

    s = sub.add_parser("server",
                       help="listen on 127.0.0.1, serve files (GET) and digest uploads (POST)")
    common(s)
    s.add_argument("--docroot", required=True)
    s.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"),
                   help="TLS; ALPN offers only the version's id")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--port-file", help="write the port here once listening")
    s.add_argument("--sessions", type=int, default=0,
                   help="exit after this many sessions ended (default 0: run until --timeout)")
    s.add_argument("--max-streams", type=int, default=None,
                   help="announce SETTINGS_MAX_CONCURRENT_STREAMS (default: nothing)")
    s.add_argument("--flow-as", choices=VERSIONS, default=None,
                   help="SELF-TESTS ONLY: apply this version's flow control whatever the wire "
                        "version (a deliberately wrong server)")

    d = sub.add_parser("dictionaries",
                       help="compare the embedded zlib dictionaries with the spec text")
    d.add_argument("--spec-dir", required=True)

    opts = parser.parse_args(argv)
    if opts.mode == "dictionaries":
        return check_dictionaries(opts)
    if opts.version == "2" and (opts.window or opts.session_window):
        parser.error("SPDY/2 has no flow control: --window and --session-window do not apply")
    if opts.version != "3.1" and opts.session_window:
        parser.error("--session-window is SPDY/3.1 only")
    if opts.mode == "client":
        if not opts.get and not opts.post:
            parser.error("client: nothing to do (give --get PATH or --post PATH FILE)")
        if opts.show_body_max:
            opts.keep_bodies = True
        opts.operations = [("GET", p, None) for p in opts.get]
        for path, file in opts.post:
            with open(file, "rb") as f:
                opts.operations.append(("POST", path, f.read()))
        return run_client(opts)
    if opts.window is not None and opts.window < DEFAULT_WINDOW:
        # The client may already be sending at 64 KiB when our SETTINGS arrives, and SPDY
        # gives no way to know when it applied them; a smaller window could not be judged.
        parser.error("server: --window below 65536 cannot be checked strictly")
    if not os.path.isdir(opts.docroot):
        parser.error("--docroot %s is not a directory" % opts.docroot)
    return run_server(opts)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(1)
