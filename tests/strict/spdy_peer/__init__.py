"""spdy_peer — the strict SPDY/2, /3 and /3.1 peer that strict_spdy.py runs, in parts:

  wire.py     what the drafts define: constants, zlib dictionaries, header blocks, frames
  session.py  one SPDY session over a socket: stream states, frame checks, flow control
  client.py   the client behaviour (strict_spdy.py client) and its report
  server.py   the server behaviour (strict_spdy.py server): files, uploads, sessions

Standard library only. strict_spdy.py is the command line; tests/strict/README.md says how
the tests use it.
"""
