'use strict'
// spdy_client.js — a SPDY client for speedyd's interop tests, built on node's
// spdy-transport (an independent SPDY implementation) over a real socket.
//
//   node spdy_client.js --port P [--tls --ca FILE] --version 2|3|3.1 [--host NAME]
//                       --scenario get|post|push|nopush|priority|goaway [scenario args]
//
// spdy-transport is driven directly over net / tls sockets: the `spdy` package's HTTP
// agent does not run on this Node version (its request path relies on internals of
// node's http module that changed), so these tests use its transport, as peer.js does.
// Three limits of spdy-transport 3.0.0 are shimmed so that the tests judge speedyd
// rather than them (each is noted in the JSON report): an 8-byte GOAWAY in SPDY/2
// (whose GOAWAY has 4), :status required in a pushed SYN_STREAM (SPDY/3 sends it in a
// HEADERS frame), and SPDY/3 flow control applied to SPDY/2.
//
// Prints one JSON line {"ok":..., "errors":[...], ...} and exits 0 when ok, 1 otherwise.
const crypto = require('crypto')
const fs = require('fs')
const net = require('net')
const path = require('path')
const tls = require('tls')

const root = process.env.SPEEDY_SOURCE_DIR || path.join(__dirname, '..', '..')
const transport = require(path.join(root, 'node_modules', 'spdy-transport'))

function parseArgs (argv) {
  const a = { port: 0, tls: false, ca: null, version: '3.1', host: 'localhost', scenario: 'get',
    paths: [], upload: null, big: null, small: null, pid: 0, timeoutMs: 60000, maxStreams: null, claim: null }
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i]
    const v = () => argv[++i]
    if (k === '--port') a.port = Number(v())
    else if (k === '--tls') a.tls = true
    else if (k === '--ca') a.ca = v()
    else if (k === '--version') a.version = v()
    else if (k === '--host') a.host = v()
    else if (k === '--scenario') a.scenario = v()
    else if (k === '--path') a.paths.push(v())
    else if (k === '--upload') a.upload = v()
    else if (k === '--big') a.big = v()
    else if (k === '--small') a.small = v()
    else if (k === '--signal-pid') a.pid = Number(v())
    else if (k === '--timeout-ms') a.timeoutMs = Number(v())
    else if (k === '--max-streams') a.maxStreams = Number(v())
    else if (k === '--claim-length') a.claim = Number(v())
    else { process.stderr.write('spdy_client.js: unknown argument ' + k + '\n'); process.exit(2) }
  }
  return a
}

const args = parseArgs(process.argv)
const report = { ok: false, version: args.version, tls: args.tls, errors: [], facts: {} }
let finished = false

function finish () {
  if (finished) return
  finished = true
  report.ok = report.errors.length === 0
  process.stdout.write(JSON.stringify(report) + '\n')
  process.exit(report.ok ? 0 : 1)
}
function fail (msg) { report.errors.push(msg); finish() }
function sha256 (buf) { return crypto.createHash('sha256').update(buf).digest('hex') }

setTimeout(() => fail('deadline of ' + args.timeoutMs + ' ms passed'), args.timeoutMs).unref()

function shim (conn, version) {
  const state = conn._spdyState
  const parser = state.parser
  const goaway = parser.onGoawayFrame
  parser.onGoawayFrame = function (body, callback) {
    if (this.version === 2 && body.size === 4) {
      report.facts.v2_goaway_shim = true
      return callback(null, { type: 'GOAWAY', lastId: body.readUInt32BE() & 0x7fffffff, code: 'OK' })
    }
    return goaway.call(this, body, callback)
  }
  const syn = parser.onSynHeadFrame
  parser.onSynHeadFrame = function (type, flags, body, callback) {
    if (type !== 0x01 || !body.has(10)) return syn.call(this, type, flags, body, callback)
    const head = body.clone(10)
    const id = head.readUInt32BE() & 0x7fffffff
    const associated = head.readUInt32BE() & 0x7fffffff
    if (associated === 0) return syn.call(this, type, flags, body, callback)
    body.skip(10)
    this.parseKVs(body, (err, headers) => {
      if (err) return callback(err)
      const promise = { type: 'PUSH_PROMISE', id: associated, fin: false, promisedId: id, path: headers[':path'] }
      promise.headers = Object.assign({}, headers)
      delete promise.headers[':status']
      if (headers[':status'] === undefined) {
        report.facts.push_status_in_headers_frame = true
        return callback(null, [promise])
      }
      callback(null, [promise, { type: 'HEADERS', id: id, fin: (flags & 0x01) !== 0,
        priority: { weight: 16, exclusive: false, parent: 0 }, writable: true, path: undefined,
        headers: { ':status': headers[':status'] } }])
    })
  }
  if (version === 2) state.streamWindow.send.setMax(1 << 30)
}

function connect (onReady) {
  const version = args.version === '3.1' ? 3.1 : Number(args.version)
  const alpn = 'spdy/' + args.version
  let socket
  const start = () => {
    if (args.tls) {
      report.facts.alpn = socket.alpnProtocol
      if (socket.alpnProtocol !== alpn) return fail('ALPN chose ' + socket.alpnProtocol + ', expected ' + alpn)
    }
    const conn = transport.connection.create(socket, { protocol: 'spdy', isServer: false,
      headerCompression: true, windowSize: 16 << 20 })
    shim(conn, version)
    if (args.maxStreams !== null) conn._spdyState.maxStreams = args.maxStreams
    conn.on('error', (e) => fail('connection error: ' + (e && e.message ? e.message : e)))
    conn.on('frame', (f) => {
      if (f.type === 'GOAWAY') report.facts.goaway = { lastId: f.lastId, code: f.code }
      if (f.type === 'RST') (report.facts.rst = report.facts.rst || []).push({ id: f.id, code: f.code })
    })
    conn.start(version)
    onReady(conn, socket)
  }
  if (args.tls) {
    socket = tls.connect({ host: '127.0.0.1', port: args.port, servername: args.host,
      ca: fs.readFileSync(args.ca), ALPNProtocols: [alpn] }, start)
  } else {
    socket = net.connect({ host: '127.0.0.1', port: args.port }, start)
  }
  socket.on('error', (e) => fail('socket error: ' + e.message))
}

// GET path; calls done({status, headers, body}) or fails. onData(bytesSoFar) per chunk.
function get (conn, p, weight, done, onData) {
  const stream = conn.request({ method: 'GET', path: p, host: args.host, priority: { weight: weight || 16 },
    headers: { 'user-agent': 'speedyd-test/1', accept: '*/*' } })
  collect(stream, 'GET ' + p, done, onData)
  return stream
}

function collect (stream, what, done, onData) {
  let status = null
  let headers = null
  const chunks = []
  let n = 0
  stream.on('response', (s, h) => { status = s; headers = h })
  stream.on('data', (c) => { chunks.push(c); n += c.length; if (onData) onData(n) })
  stream.on('error', (e) => fail(what + ': stream error: ' + e.message))
  stream.on('end', () => {
    if (status === null) return fail(what + ': body ended without a response')
    done({ status: status, headers: headers, body: Buffer.concat(chunks) })
  })
  if (typeof stream.resume === 'function') stream.resume()
}

const scenarios = {
  // Every --path at once; reports status, length and sha256 of each.
  get (conn) {
    let pending = args.paths.length
    report.responses = {}
    for (const p of args.paths) {
      get(conn, p, 16, (r) => {
        report.responses[p] = { status: r.status, length: r.body.length, sha256: sha256(r.body),
          content_type: r.headers['content-type'] }
        if (--pending === 0) finish()
      })
    }
  },
  // POST the --upload file to --path (declaring --claim-length instead of its length when
  // given); reports the answer's status and sha256.
  post (conn) {
    const body = fs.readFileSync(args.upload)
    const p = args.paths[0] || '/upload'
    const declared = args.claim !== null ? args.claim : body.length
    const stream = conn.request({ method: 'POST', path: p, host: args.host,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(declared) } })
    collect(stream, 'POST ' + p, (r) => {
      report.status = r.status
      report.length = r.body.length
      report.sha256 = sha256(r.body)
      report.sent_sha256 = sha256(body)
      finish()
    })
    stream.end(body)
  },
  // GET the page (--path) and collect every push associated with it.
  push (conn) {
    report.pushes = {}
    let pending = 1
    const page = args.paths[0] || '/'
    const stream = get(conn, page, 16, (r) => {
      report.page = { status: r.status, length: r.body.length }
      if (--pending === 0) setTimeout(finish, 300)
    })
    stream.on('pushPromise', (push) => {
      pending++
      const started = !report.page
      collect(push, 'push ' + push.path, (r) => {
        report.pushes[push.path] = { status: r.status, length: r.body.length, sha256: sha256(r.body),
          before_page_end: started, host: push.host }
        if (--pending === 0) setTimeout(finish, 300)
      })
    })
  },
  // The big file (--big) at the lowest priority, then, once it is flowing, the small one
  // (--small) at the highest: reports how much of the big one had arrived when the small
  // one was complete.
  priority (conn) {
    let bigBytes = 0
    let smallStarted = false
    let smallDone = false
    get(conn, args.big, 36, (r) => {
      report.big = { status: r.status, length: r.body.length, sha256: sha256(r.body) }
      if (!smallDone) report.errors.push('the big response finished before the small one')
      finish()
    }, (n) => {
      bigBytes = n
      if (!smallStarted && n >= 64 * 1024) {
        smallStarted = true
        report.big_bytes_when_small_requested = n
        get(conn, args.small, 1, (r) => {
          smallDone = true
          report.small = { status: r.status, length: r.body.length, sha256: sha256(r.body) }
          report.big_bytes_when_small_done = bigBytes
        })
      }
    })
  },
  // GET the big file; after its first bytes, SIGTERM the server (--signal-pid): a GOAWAY
  // must come, the response must still complete, and the connection must end.
  goaway (conn, socket) {
    let signalled = false
    get(conn, args.big, 16, (r) => {
      report.big = { status: r.status, length: r.body.length, sha256: sha256(r.body) }
      report.goaway_before_end = !!report.facts.goaway
    }, (n) => {
      if (!signalled && n > 0) {
        signalled = true
        process.kill(args.pid, 'SIGTERM')
      }
    })
    socket.on('close', () => {
      report.socket_closed = true
      if (!report.big) report.errors.push('the connection closed before the response completed')
      if (!report.facts.goaway) report.errors.push('no GOAWAY before the connection closed')
      finish()
    })
  }
}

if (!scenarios[args.scenario]) { process.stderr.write('unknown scenario\n'); process.exit(2) }
connect((conn, socket) => scenarios[args.scenario](conn, socket))
