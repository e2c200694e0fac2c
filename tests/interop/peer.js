'use strict'
// peer.js — the node side of speedy's interop tests: node's spdy-transport, an
// independent SPDY implementation, plays one end of a scripted scenario.
//
//   node peer.js --role client|server --version 2|3|3.1 --scenario NAME
//                [--record FILE] [--small] [--timeout-ms N]
//       Speaks SPDY on stdin (bytes from the peer) and stdout (bytes to the peer). The
//       C test drivers (tests/interop/*.c) run speedy's engine at the other end. One
//       JSON line goes to fd 3 (stderr when fd 3 is not open) when the scenario has
//       finished, or failed, or stdin closed first: {"ok":true|false,"errors":[...],...}.
//       The process exits when stdin closes (or at its own deadline).
//   node peer.js --role pair --version V --scenario NAME [--record-dir DIR] [--small]
//       Runs both ends in this process against each other (a self-test of the scenario
//       scripts that needs no C code) and, with --record-dir, stores what each end wrote
//       as DIR/spdy<V>-<scenario>-<client|server>.bin: the corpus of
//       tests/interop/corpus/.
//
// Scenarios are symmetric: the node client of a scenario expects what the C server of
// the same scenario does, and the node server does what the C client expects, so the
// pair mode exercises exactly the scripts the C tests meet. The contract with the C side
// (paths, headers, body contents) is spelled out next to each scenario below and in
// interop_harness.h.
//
// spdy-transport is driven directly; the `spdy` package's HTTP layer is not used.
//
// Three limits of spdy-transport 3.0.0 are worked around in connect() so that the tests
// judge speedy rather than them (each sets a fact in the report when it acts):
// - it wants 8 bytes of GOAWAY payload in SPDY/2, whose GOAWAY has 4;
// - it wants a pushed SYN_STREAM to carry :status, which SPDY/3 sends in a HEADERS
//   frame after it;
// - it applies SPDY/3 flow control to SPDY/2 and stops sending after 64 KiB on a stream
//   until a WINDOW_UPDATE comes, which a SPDY/2 peer never sends.
// What it sends is not altered: its quirks (PERSIST_VALUE on every SETTINGS entry, an
// 8-byte SPDY/2 GOAWAY, WINDOW_UPDATE in SPDY/2, pushes without FLAG_UNIDIRECTIONAL,
// ":status: 200 OK") reach speedy as they are.

const fs = require('fs')
const path = require('path')
const { Duplex } = require('stream')

const HOST = 'interop.test'
const USER_AGENT = 'spdy-transport-interop/1'
const SET_COOKIES = ['a=1; Path=/', 'b=2; Path=/']
// SETTINGS each role announces in the "settings" scenario (the C side uses the same).
const ANNOUNCE = {
  client: { max_concurrent_streams: 7, initial_window_size: 262144 },
  server: { max_concurrent_streams: 9, initial_window_size: 131072 }
}
const PUSH_BODY = 5000
const INDEX_BODY = 2000

// ---- Body contents shared with the C side -------------------------------------------

// Byte i of a body of n bytes: the top byte of (i + n) * 2654435761 mod 2^32. Not
// periodic in any small power of two, so a misplaced or repeated chunk is caught.
function pattern (n) {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) b[i] = Math.imul(i + n, 0x9E3779B1) >>> 24
  return b
}

// FNV-1a, 32 bits, as 8 lower-case hex digits.
function fnv1a (buf) {
  let h = 0x811c9dc5
  for (let i = 0; i < buf.length; i++) {
    h ^= buf[i]
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, '0')
}

// ---- Arguments ----------------------------------------------------------------------

function parseArgs (argv) {
  const args = { role: null, version: null, scenario: null, record: null, recordDir: null, small: false, timeoutMs: 18000 }
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i]
    const next = () => {
      if (i + 1 >= argv.length) usage('missing value for ' + a)
      return argv[++i]
    }
    if (a === '--role') args.role = next()
    else if (a === '--version') args.version = next()
    else if (a === '--scenario') args.scenario = next()
    else if (a === '--record') args.record = next()
    else if (a === '--record-dir') args.recordDir = next()
    else if (a === '--small') args.small = true
    else if (a === '--timeout-ms') args.timeoutMs = Number(next())
    else usage('unknown argument ' + a)
  }
  if (!['client', 'server', 'pair'].includes(args.role)) usage('--role must be client, server or pair')
  if (!['2', '3', '3.1'].includes(args.version)) usage('--version must be 2, 3 or 3.1')
  if (!SCENARIOS[args.scenario]) usage('--scenario must be one of ' + Object.keys(SCENARIOS).join(', '))
  args.version = Number(args.version)
  return args
}

function usage (msg) {
  process.stderr.write('peer.js: ' + msg + '\n')
  process.exit(2)
}

// ---- Scenario context ---------------------------------------------------------------

// One end of a scenario: its connection, its errors and its report.
class End {
  constructor (role, version, small, onReport) {
    this.role = role
    this.version = version
    this.small = small
    this.errors = []
    this.facts = {}
    this.reported = false
    this.onReport = onReport
    this.conn = null
    this.framesIn = []
  }

  fail (msg) {
    this.errors.push(msg)
    // A failure is final: report at once so the C side need not wait for a deadline.
    this.report()
  }

  check (cond, msg) {
    if (!cond) this.fail(msg)
    return cond
  }

  report (extra) {
    if (this.reported) return
    this.reported = true
    const out = Object.assign({
      ok: this.errors.length === 0,
      role: this.role,
      version: this.version,
      errors: this.errors
    }, this.facts, extra || {})
    this.onReport(out)
  }

  // Called when the peer closed (stdin EOF) or at the deadline: what is still missing.
  finish (why) {
    if (this.reported) return
    this.errors.push(why + '; still waiting for: ' + (this.waitingFor ? this.waitingFor() : '?'))
    this.report({ frames_in: this.framesIn.slice(-40) })
  }
}

function connect (end, socket, options) {
  const transport = require('spdy-transport')
  const conn = transport.connection.create(socket, Object.assign({
    protocol: 'spdy',
    isServer: end.role === 'server',
    headerCompression: true
  }, options || {}))
  end.conn = conn
  const state = conn._spdyState

  // spdy-transport 3.0.0 requires 8 bytes of GOAWAY payload in every version, but a
  // SPDY/2 GOAWAY carries only the last-good-stream-id (4 bytes). Accept the spec's
  // form, so the test judges speedy's frame rather than this parser limit.
  const parser = state.parser
  const originalGoaway = parser.onGoawayFrame
  parser.onGoawayFrame = function (body, callback) {
    if (this.version === 2 && body.size === 4) {
      end.facts.v2_goaway_shim = true
      return callback(null, { type: 'GOAWAY', lastId: body.readUInt32BE() & 0x7fffffff, code: 'OK' })
    }
    return originalGoaway.call(this, body, callback)
  }

  // spdy-transport 3.0.0 wants a pushed SYN_STREAM to carry :status in every version,
  // while SPDY/3 (3.3.1) sends the push's response headers in a HEADERS frame after
  // it. Accept that form: the promise now, the response when its HEADERS arrives.
  const originalSyn = parser.onSynHeadFrame
  parser.onSynHeadFrame = function (type, flags, body, callback) {
    if (type !== 0x01 || !body.has(10)) return originalSyn.call(this, type, flags, body, callback)
    const head = body.clone(10)
    const id = head.readUInt32BE() & 0x7fffffff
    const associated = head.readUInt32BE() & 0x7fffffff
    const priority = head.readUInt8() >> 5
    if (associated === 0) return originalSyn.call(this, type, flags, body, callback)
    body.skip(10)
    this.parseKVs(body, (err, headers) => {
      if (err) return callback(err)
      const promise = { type: 'PUSH_PROMISE', id: associated, fin: false, promisedId: id, path: headers[':path'] }
      promise.headers = Object.assign({}, headers)
      delete promise.headers[':status']
      end.facts.push_flags = flags
      if (headers[':status'] === undefined) {
        end.facts.push_status_in_headers_frame = true
        return callback(null, [promise])
      }
      const weight = transport.protocol.base.utils.priorityToWeight(priority)
      callback(null, [promise, {
        type: 'HEADERS',
        id: id,
        fin: (flags & 0x01) !== 0,
        priority: { weight: weight, exclusive: false, parent: 0 },
        writable: true,
        path: undefined,
        headers: { ':status': headers[':status'] }
      }])
    })
  }

  // spdy-transport applies SPDY/3 flow control to SPDY/2 as well: it sends WINDOW_UPDATE
  // frames (which SPDY/2 does not have; a peer ignores them) and stops sending after
  // 64 KiB on a stream until one arrives. Open its send windows so that the tests judge
  // speedy's SPDY/2, which has no flow control.
  if (end.version === 2) {
    state.streamWindow.send.setMax(1 << 30)
    end.facts.v2_send_window_opened = true
  }

  conn.on('frame', (frame) => {
    const summary = { type: frame.type }
    if (frame.id !== undefined) summary.id = frame.id
    if (frame.type === 'GOAWAY') { summary.lastId = frame.lastId; summary.code = frame.code }
    if (frame.type === 'SETTINGS') summary.settings = frame.settings
    if (frame.type === 'RST') summary.code = frame.code
    if (frame.type === 'DATA') { summary.len = frame.data.length; summary.fin = frame.fin }
    if (frame.type === 'WINDOW_UPDATE') summary.delta = frame.delta
    end.framesIn.push(summary)
    // A RST_STREAM for a live stream fails that stream's exchange (its 'error' event);
    // one for a finished stream (an answer to a late WINDOW_UPDATE) is only noted.
    if (frame.type === 'RST') {
      end.facts.rst_received = (end.facts.rst_received || []).concat([{ id: frame.id, code: frame.code }])
    }
  })
  conn.on('error', (err) => end.fail('connection error: ' + (err && err.message ? err.message : String(err))))
  conn.start(end.version)
  return conn
}

// Collects a response (status, headers, body) on a client stream.
function collectResponse (end, stream, what, onDone) {
  let status = null
  let headers = null
  const chunks = []
  stream.on('response', (s, h) => { status = s; headers = h })
  stream.on('data', (c) => chunks.push(c))
  stream.on('error', (err) => end.fail(what + ': stream error: ' + err.message))
  stream.on('end', () => {
    if (!end.check(status !== null, what + ': body ended without a response')) return
    onDone(status, headers, Buffer.concat(chunks))
  })
  if (typeof stream.resume === 'function') stream.resume()
}

// Collects a request body on a server stream.
function collectBody (end, stream, what, onDone) {
  const chunks = []
  stream.on('data', (c) => chunks.push(c))
  stream.on('error', (err) => end.fail(what + ': stream error: ' + err.message))
  stream.on('end', () => onDone(Buffer.concat(chunks)))
}

function deepEqual (a, b) {
  return JSON.stringify(a) === JSON.stringify(b)
}

function checkPatternBody (end, what, body, n) {
  if (!end.check(body.length === n, what + ': body is ' + body.length + ' bytes, expected ' + n)) return false
  const expected = pattern(n)
  if (!body.equals(expected)) {
    let at = 0
    while (at < n && body[at] === expected[at]) at++
    end.fail(what + ': body differs from the pattern at byte ' + at)
    return false
  }
  return true
}

// The response of a /bytes/N request, as the C server and the node server send it.
function bytesResponseHeaders (n) {
  return {
    'content-type': 'application/octet-stream',
    'set-cookie': SET_COOKIES,
    'x-body-length': String(n),
    server: 'spdy-transport-interop'
  }
}

function checkBytesResponse (end, what, status, headers, body, n) {
  end.check(status === 200, what + ': status ' + status + ', expected 200')
  end.check(deepEqual(headers['set-cookie'], SET_COOKIES),
    what + ': set-cookie is ' + JSON.stringify(headers['set-cookie']) + ', expected both cookies in order')
  end.check(headers['content-type'] === 'application/octet-stream',
    what + ': content-type is ' + JSON.stringify(headers['content-type']))
  end.check(headers['x-body-length'] === String(n),
    what + ': x-body-length is ' + JSON.stringify(headers['x-body-length']))
  checkPatternBody(end, what, body, n)
}

// Request headers every GET of the scenarios carries (the C client sends the same).
function requestHeaders () {
  return { 'user-agent': USER_AGENT, accept: '*/*', 'x-multi': ['one', 'two'] }
}

function checkRequestHeaders (end, what, stream, method, path) {
  const h = stream.headers
  end.check(h[':method'] === method, what + ': :method is ' + JSON.stringify(h[':method']))
  end.check(h[':path'] === path, what + ': :path is ' + JSON.stringify(h[':path']))
  end.check(h[':authority'] === HOST, what + ': host is ' + JSON.stringify(h[':authority']))
  end.check(h[':scheme'] === 'https', what + ': scheme is ' + JSON.stringify(h[':scheme']))
  end.check(h['x-multi'] === 'one, two', what + ': x-multi is ' + JSON.stringify(h['x-multi']) +
    ' (spdy-transport joins the NUL-separated values with ", ")')
  end.check(typeof h['user-agent'] === 'string' && h['user-agent'].length > 0, what + ': no user-agent')
}

function bytesPathSize (p) {
  const m = /^\/bytes\/([0-9]{1,7})$/.exec(p || '')
  return m ? Number(m[1]) : -1
}

// A server that answers GET /bytes/N with N pattern bytes and POST /upload with
// "<length> <fnv1a>" of what it received. Calls onFinished(stream) after each response.
function serveBasic (end, stream, onFinished) {
  const what = stream.method + ' ' + stream.path
  const n = bytesPathSize(stream.path)
  if (stream.method === 'GET' && n >= 0) {
    checkRequestHeaders(end, what, stream, 'GET', stream.path)
    stream.on('finish', () => onFinished(stream))
    stream.respond(200, bytesResponseHeaders(n))
    stream.end(pattern(n))
    stream.resume()
    return true
  }
  if (stream.method === 'POST' && stream.path === '/upload') {
    collectBody(end, stream, what, (body) => {
      end.facts.upload_bytes = body.length
      stream.on('finish', () => onFinished(stream))
      stream.respond(200, { 'content-type': 'text/plain' })
      stream.end(Buffer.from(body.length + ' ' + fnv1a(body)))
    })
    return true
  }
  return false
}

// spdy-transport's windowSize option sets the stream windows and the v3.1 session
// window alike; below 64 KiB it announces the session window with a negative delta
// (0xffff.... on the wire), a flow-control error. So v3.1 keeps 64 KiB.
function smallWindow (small, version, bytes) {
  return small && version !== 3.1 ? bytes : 65536
}

function bodySizes (small) {
  return [0, 1024, small ? 12000 : 204800]
}

function uploadSize (small) {
  return small ? 12000 : 102400
}

// ---- Scenarios ----------------------------------------------------------------------
// Each scenario has client(end) and server(end), and options(small, version) giving the
// spdy-transport connection options of each role. end.waitingFor() says what is
// missing if the peer stops early.

const SCENARIOS = {}

// get: the client GETs /bytes/0, /bytes/1024 and /bytes/204800 (12000 with --small) at
// once with headers user-agent, accept, x-multi: one\0two; the server answers 200 with
// content-type, two set-cookie values, x-body-length and the pattern body. The node
// client keeps its windows at 64 KiB (16 KiB with --small) so the large body needs
// WINDOW_UPDATEs (v3, v3.1).
SCENARIOS.get = {
  options: (small, version) => ({ client: { windowSize: smallWindow(small, version, 16384) }, server: {} }),
  client (end) {
    const sizes = bodySizes(end.small)
    let pending = sizes.length
    end.facts.responses = []
    end.waitingFor = () => pending + ' of ' + sizes.length + ' responses'
    for (const n of sizes) {
      const p = '/bytes/' + n
      const stream = end.conn.request({ method: 'GET', path: p, host: HOST, headers: requestHeaders() })
      collectResponse(end, stream, 'GET ' + p, (status, headers, body) => {
        checkBytesResponse(end, 'GET ' + p, status, headers, body, n)
        end.facts.responses.push({ path: p, status: status, bytes: body.length, fnv: fnv1a(body) })
        if (--pending === 0) end.report()
      })
    }
  },
  server (end) {
    const sizes = bodySizes(end.small)
    let pending = sizes.length
    end.waitingFor = () => pending + ' of ' + sizes.length + ' requests answered'
    end.conn.on('stream', (stream) => {
      if (!serveBasic(end, stream, () => { if (--pending === 0) end.report() })) {
        end.fail('unexpected request ' + stream.method + ' ' + stream.path)
      }
    })
  }
}

// post: the client POSTs 102400 pattern bytes (12000 with --small) to /upload with
// content-type and content-length; the server answers 200 text/plain "<length> <fnv1a>".
SCENARIOS.post = {
  options: (small, version) => ({ client: {}, server: { windowSize: smallWindow(small, version, 8192) } }),
  client (end) {
    const n = uploadSize(end.small)
    const body = pattern(n)
    let done = false
    end.waitingFor = () => done ? 'nothing' : 'the response to POST /upload'
    const stream = end.conn.request({
      method: 'POST',
      path: '/upload',
      host: HOST,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(n), 'user-agent': USER_AGENT }
    })
    collectResponse(end, stream, 'POST /upload', (status, headers, got) => {
      done = true
      const expected = n + ' ' + fnv1a(body)
      end.check(status === 200, 'POST /upload: status ' + status)
      end.check(got.toString() === expected,
        'POST /upload: response body ' + JSON.stringify(got.toString()) + ', expected ' + JSON.stringify(expected))
      end.report()
    })
    stream.end(body)
  },
  server (end) {
    const n = uploadSize(end.small)
    let done = false
    end.waitingFor = () => done ? 'nothing' : 'POST /upload'
    end.conn.on('stream', (stream) => {
      if (stream.method !== 'POST' || stream.path !== '/upload') {
        return end.fail('unexpected request ' + stream.method + ' ' + stream.path)
      }
      end.check(stream.headers['content-length'] === String(n), 'POST: content-length ' + stream.headers['content-length'])
      collectBody(end, stream, 'POST /upload', (body) => {
        checkPatternBody(end, 'POST /upload', body, n)
        end.facts.upload_bytes = body.length
        stream.on('finish', () => { done = true; end.report() })
        stream.respond(200, { 'content-type': 'text/plain' })
        stream.end(Buffer.from(body.length + ' ' + fnv1a(body)))
      })
    })
  }
}

// push: the client GETs /index.html; the server pushes /pushed.js (5000 pattern bytes,
// content-type application/javascript, x-pushed: yes) associated with it, then answers
// 200 with 2000 pattern bytes. spdy-transport puts the push's :status into its
// SYN_STREAM in every version and sets neither FIN nor UNIDIRECTIONAL on it.
SCENARIOS.push = {
  options: () => ({ client: {}, server: {} }),
  client (end) {
    let gotIndex = false
    let gotPush = false
    end.waitingFor = () => (gotIndex ? '' : 'index ') + (gotPush ? '' : 'push')
    const maybeDone = () => { if (gotIndex && gotPush) end.report() }
    const stream = end.conn.request({ method: 'GET', path: '/index.html', host: HOST, headers: requestHeaders() })
    stream.on('pushPromise', (push) => {
      end.facts.push_path = push.path
      // SPDY/2 (draft 2, 3.3.1) wants the pushed url absolute; SPDY/3 sends :path.
      const paths = end.version === 2 ? ['/pushed.js', 'https://' + HOST + '/pushed.js'] : ['/pushed.js']
      end.check(paths.includes(push.path), 'push path ' + JSON.stringify(push.path))
      end.check(push.host === HOST, 'push host ' + JSON.stringify(push.host))
      collectResponse(end, push, 'push /pushed.js', (status, headers, body) => {
        end.check(status === 200, 'push: status ' + status)
        // spdy-transport hands the pushed SYN_STREAM's fields other than :status to the
        // promise, so the response's content-type is among push.headers.
        const type = headers['content-type'] || push.headers['content-type']
        end.check(type === 'application/javascript', 'push: content-type ' + type)
        checkPatternBody(end, 'push /pushed.js', body, PUSH_BODY)
        gotPush = true
        maybeDone()
      })
    })
    collectResponse(end, stream, 'GET /index.html', (status, headers, body) => {
      end.check(status === 200, 'index: status ' + status)
      checkPatternBody(end, 'GET /index.html', body, INDEX_BODY)
      gotIndex = true
      maybeDone()
    })
  },
  server (end) {
    let finished = 0
    end.waitingFor = () => finished + ' of 2 streams finished'
    const oneFinished = () => { if (++finished === 2) end.report() }
    end.conn.on('stream', (stream) => {
      if (stream.method !== 'GET' || stream.path !== '/index.html') {
        return end.fail('unexpected request ' + stream.method + ' ' + stream.path)
      }
      checkRequestHeaders(end, 'GET /index.html', stream, 'GET', '/index.html')
      stream.pushPromise({
        path: '/pushed.js',
        host: HOST,
        method: 'GET',
        status: 200,
        priority: { weight: 16 },
        headers: { accept: '*/*' },
        response: { 'content-type': 'application/javascript', 'x-pushed': 'yes' }
      }, (err, push) => {
        if (err) return end.fail('pushPromise: ' + err.message)
        push.on('finish', oneFinished)
        push.on('error', (e) => end.fail('push stream error: ' + e.message))
        push.end(pattern(PUSH_BODY))
      })
      stream.on('finish', oneFinished)
      stream.respond(200, { 'content-type': 'text/html' })
      stream.end(pattern(INDEX_BODY))
      stream.resume()
    })
  }
}

// settings: each side announces SETTINGS (client: MAX_CONCURRENT_STREAMS 7,
// INITIAL_WINDOW_SIZE 262144; server: 9 and 131072) and checks the other's; then the
// client GETs /bytes/1024. spdy-transport sends its SETTINGS when the connection starts,
// with PERSIST_VALUE set on every entry.
SCENARIOS.settings = {
  options: () => ({
    client: { maxStreams: ANNOUNCE.client.max_concurrent_streams, windowSize: ANNOUNCE.client.initial_window_size },
    server: { maxStreams: ANNOUNCE.server.max_concurrent_streams, windowSize: ANNOUNCE.server.initial_window_size }
  }),
  client (end) { settingsEnd(end, 'server', (maybeDone) => getOne(end, maybeDone)) },
  server (end) {
    settingsEnd(end, 'client', (maybeDone) => {
      end.conn.on('stream', (stream) => {
        if (!serveBasic(end, stream, maybeDone)) end.fail('unexpected request ' + stream.path)
      })
    })
  }
}

function settingsEnd (end, peerRole, startStreams) {
  const want = ANNOUNCE[peerRole]
  const seen = {}
  let streamDone = false
  let settingsDone = false
  end.waitingFor = () => (settingsDone ? '' : 'peer SETTINGS ' + JSON.stringify(want) + ' (seen ' + JSON.stringify(seen) + ') ') +
    (streamDone ? '' : 'the GET /bytes/1024 exchange')
  const maybeDone = () => { if (settingsDone && streamDone) end.report() }
  end.conn.on('frame', (frame) => {
    if (frame.type !== 'SETTINGS') return
    Object.assign(seen, frame.settings)
    end.facts.peer_settings = seen
    if (!settingsDone && Object.keys(want).every((k) => seen[k] === want[k])) {
      settingsDone = true
      maybeDone()
    }
  })
  startStreams(() => { streamDone = true; maybeDone() })
}

function getOne (end, onDone) {
  const stream = end.conn.request({ method: 'GET', path: '/bytes/1024', host: HOST, headers: requestHeaders() })
  collectResponse(end, stream, 'GET /bytes/1024', (status, headers, body) => {
    checkBytesResponse(end, 'GET /bytes/1024', status, headers, body, 1024)
    onDone()
  })
  return stream
}

// ping: each side sends two PINGs when the connection starts and waits for both answers
// and for the peer's two PINGs.
SCENARIOS.ping = {
  options: () => ({ client: {}, server: {} }),
  client (end) { pingEnd(end) },
  server (end) { pingEnd(end) }
}

function pingEnd (end) {
  let acked = 0
  let received = 0
  end.facts.pings_acked = 0
  end.facts.pings_received = 0
  end.waitingFor = () => 'pings acked ' + acked + '/2, pings received ' + received + '/2'
  const maybeDone = () => { if (acked >= 2 && received >= 2) end.report() }
  end.conn.on('ping', () => { end.facts.pings_received = ++received; maybeDone() })
  for (let i = 0; i < 2; i++) {
    end.conn.ping(() => { end.facts.pings_acked = ++acked; maybeDone() })
  }
}

// goaway_client: the client GETs /bytes/1024 and, once the response has ended, sends
// GOAWAY (OK). The server answers and waits for that GOAWAY.
// goaway_server: the client GETs /bytes/1024; the server answers and then sends GOAWAY
// (OK, last-good-stream-id 1). The client waits for the response and that GOAWAY.
SCENARIOS.goaway_client = {
  options: () => ({ client: {}, server: {} }),
  client (end) {
    let sent = false
    end.waitingFor = () => sent ? 'nothing' : 'the response before GOAWAY'
    getOne(end, () => {
      sent = true
      end.conn.end()
      end.report()
    })
  },
  server (end) {
    goawayWaiter(end, (maybeDone) => {
      end.conn.on('stream', (stream) => {
        if (!serveBasic(end, stream, maybeDone)) end.fail('unexpected request ' + stream.path)
      })
    })
  }
}

SCENARIOS.goaway_server = {
  options: () => ({ client: {}, server: {} }),
  client (end) {
    goawayWaiter(end, (maybeDone) => getOne(end, maybeDone), 1)
  },
  server (end) {
    let sent = false
    end.waitingFor = () => sent ? 'nothing' : 'GET /bytes/1024'
    end.conn.on('stream', (stream) => {
      const ok = serveBasic(end, stream, () => {
        sent = true
        end.conn.end()
        end.report()
      })
      if (!ok) end.fail('unexpected request ' + stream.path)
    })
  }
}

function goawayWaiter (end, startStreams, wantLastId) {
  let goaway = null
  let streamDone = false
  end.waitingFor = () => (goaway ? '' : 'GOAWAY ') + (streamDone ? '' : 'the GET /bytes/1024 exchange')
  const maybeDone = () => { if (goaway && streamDone) end.report() }
  end.conn.on('frame', (frame) => {
    if (frame.type !== 'GOAWAY') return
    goaway = frame
    end.facts.goaway = { lastId: frame.lastId, code: frame.code }
    end.check(frame.code === 'OK', 'GOAWAY status ' + frame.code + ', expected OK')
    if (wantLastId !== undefined) {
      end.check(frame.lastId === wantLastId, 'GOAWAY last-good-stream-id ' + frame.lastId + ', expected ' + wantLastId)
    }
    maybeDone()
  })
  startStreams(() => { streamDone = true; maybeDone() })
}

// ---- Transports ---------------------------------------------------------------------

// The socket spdy-transport writes to and reads from: stdin and stdout of this process.
class StdioSocket extends Duplex {
  constructor (recordFd) {
    super()
    this.recordFd = recordFd
    process.stdin.on('data', (d) => { if (!this.push(d)) process.stdin.pause() })
    process.stdout.on('error', () => {}) // the peer may close first; its verdict stands
  }

  _read () { process.stdin.resume() }

  _write (chunk, encoding, callback) {
    if (this.recordFd !== null) fs.writeSync(this.recordFd, chunk)
    process.stdout.write(chunk, () => callback())
  }
}

// One end of an in-memory connection (pair mode).
class MemorySocket extends Duplex {
  constructor () {
    super()
    this.peer = null
    this.recorded = []
  }

  _read () {}

  _write (chunk, encoding, callback) {
    this.recorded.push(Buffer.from(chunk))
    const peer = this.peer
    setImmediate(() => peer.push(chunk))
    callback()
  }
}

function writeResultLine (obj) {
  const line = JSON.stringify(obj) + '\n'
  try {
    fs.writeSync(3, line)
  } catch (e) {
    // No fd 3 (run by hand): stderr. A closed one: the test has stopped listening.
    if (e.code === 'EBADF') process.stderr.write(line)
  }
}

function runStdio (args) {
  const scenario = SCENARIOS[args.scenario]
  const recordFd = args.record ? fs.openSync(args.record, 'w') : null
  const end = new End(args.role, args.version, args.small, writeResultLine)
  const socket = new StdioSocket(recordFd)
  connect(end, socket, scenario.options(args.small, args.version)[args.role])
  scenario[args.role](end)

  process.stdin.on('end', () => {
    end.finish('the peer closed the connection')
    if (recordFd !== null) fs.closeSync(recordFd)
    process.exit(end.errors.length === 0 ? 0 : 1)
  })
  setTimeout(() => {
    end.finish('deadline of ' + args.timeoutMs + ' ms passed')
    process.exit(1)
  }, args.timeoutMs).unref()
  // Keep running until stdin closes even when spdy-transport has nothing left to do.
  const keepAlive = setInterval(() => {}, 1000)
  process.stdin.on('end', () => clearInterval(keepAlive))
}

function runPair (args) {
  const scenario = SCENARIOS[args.scenario]
  const results = {}
  const clientSocket = new MemorySocket()
  const serverSocket = new MemorySocket()
  clientSocket.peer = serverSocket
  serverSocket.peer = clientSocket
  const ends = {}
  const finishAll = (code) => {
    if (args.recordDir) {
      const v = args.version === 3.1 ? '31' : String(args.version)
      for (const [role, socket] of [['client', clientSocket], ['server', serverSocket]]) {
        const file = path.join(args.recordDir, 'spdy' + v + '-' + args.scenario + '-' + role + '.bin')
        fs.writeFileSync(file, Buffer.concat(socket.recorded))
      }
    }
    process.stdout.write(JSON.stringify(results) + '\n')
    process.exit(code)
  }
  const onReport = (role) => (obj) => {
    results[role] = obj
    if (results.client && results.server) {
      // Let frames still in flight (WINDOW_UPDATEs, the last DATA) settle for a moment.
      setTimeout(() => finishAll(results.client.ok && results.server.ok ? 0 : 1), 200)
    }
  }
  ends.server = new End('server', args.version, args.small, onReport('server'))
  ends.client = new End('client', args.version, args.small, onReport('client'))
  const options = scenario.options(args.small, args.version)
  connect(ends.server, serverSocket, options.server)
  connect(ends.client, clientSocket, options.client)
  scenario.server(ends.server)
  scenario.client(ends.client)
  setTimeout(() => {
    ends.client.finish('deadline passed')
    ends.server.finish('deadline passed')
  }, args.timeoutMs).unref()
}

const args = parseArgs(process.argv)
if (args.role === 'pair') runPair(args)
else runStdio(args)
