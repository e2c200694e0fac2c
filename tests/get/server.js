'use strict'
// server.js — the node server `speedy get` is tested against: node's spdy-transport (an
// independent SPDY implementation) driven directly over net / tls sockets (the `spdy`
// package's HTTP wrapper is not used), or node's own http/https for --http1.
//
//   node server.js [--tls CERT KEY] [--version 2|3|3.1] [--protocols a,b,c] [--http1]
//                  [--raw-pushes] [--late-status] [--no-alpn]
//
// Listens on 127.0.0.1 port 0 and prints {"port":N} on stdout. Exits when stdin closes
// (the test's end) or after 60 s. Plaintext SPDY speaks --version (default 3.1); TLS picks
// the version by ALPN/NPN from --protocols (default spdy/3.1,spdy/3,spdy/2); with
// --no-alpn it negotiates nothing (node has no NPN: this is what a server that offers SPDY
// only by NPN looks like to a client that cannot offer NPN) and speaks SPDY --version.
//
// Routes (the test script checks the client's output against these):
//   GET  /bytes/N       N pattern bytes (byte i = top byte of (i + N) * 0x9E3779B1)
//   GET  /index.html    pushes /pushed.js (5000 pattern bytes) then answers 2000 bytes
//   GET  /pushed.js     5000 pattern bytes, answered after 300 ms
//   GET  /cross.html    pushes a resource of another origin (must be refused), answers "ok"
//   POST /upload        answers "<length> <sha256 hex>" of the body received
//   GET  /goaway-once   the first one is answered "ok" after a GOAWAY naming it the last
//                       good stream (later streams of that session are not processed)
//   GET  /refuse-once   the first request is reset with REFUSED_STREAM, later ones get "ok"
//   GET  /deflate       /bytes/100000's body, content-encoding deflate (zlib-wrapped)
//   GET  /deflate-raw   the same as raw deflate (no zlib wrapper, as some servers send it)
//   GET  /gzip-cut      a gzip body cut short: its compressed stream never ends
//   anything else       404

const fs = require('fs')
const net = require('net')
const tls = require('tls')
const crypto = require('crypto')
const zlib = require('zlib')

const args = { tls: null, version: '3.1', protocols: ['spdy/3.1', 'spdy/3', 'spdy/2'], http1: false, rawPushes: false, lateStatus: false, noAlpn: false }
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]
  if (a === '--tls') { args.tls = { cert: process.argv[++i], key: process.argv[++i] } }
  else if (a === '--version') args.version = process.argv[++i]
  else if (a === '--protocols') args.protocols = process.argv[++i].split(',')
  else if (a === '--http1') args.http1 = true
  else if (a === '--raw-pushes') args.rawPushes = true
  else if (a === '--late-status') args.lateStatus = true
  else if (a === '--no-alpn') args.noAlpn = true
  else { process.stderr.write('server.js: unknown argument ' + a + '\n'); process.exit(2) }
}

function pattern (n) {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) b[i] = Math.imul(i + n, 0x9E3779B1) >>> 24
  return b
}

let refused = 0
let goaways = 0

// Answers one request: calls respond(status, headers, body) and, for SPDY, push(path,
// host, body) before it.
function route (method, path, body, respond, push) {
  const m = /^\/bytes\/([0-9]{1,9})$/.exec(path)
  if (method === 'GET' && m) {
    const n = Number(m[1])
    return respond(200, { 'content-type': 'application/octet-stream', 'content-length': String(n) }, pattern(n))
  }
  if (method === 'GET' && path === '/index.html' && push) {
    push('/pushed.js', null, pattern(5000), () =>
      respond(200, { 'content-type': 'text/html' }, pattern(2000)))
    return
  }
  if (method === 'GET' && path === '/pushed.js') { // late, so that the push comes first
    setTimeout(() => respond(200, { 'content-type': 'application/javascript' }, pattern(5000)), 300)
    return
  }
  if (method === 'GET' && path === '/cross.html' && push) {
    push('/evil.js', 'evil.example', pattern(100), () =>
      respond(200, { 'content-type': 'text/plain' }, Buffer.from('ok')))
    return
  }
  if (method === 'POST' && path === '/upload') {
    const digest = crypto.createHash('sha256').update(body).digest('hex')
    return respond(200, { 'content-type': 'text/plain' }, Buffer.from(body.length + ' ' + digest))
  }
  if (method === 'GET' && (path === '/deflate' || path === '/deflate-raw' || path === '/gzip-cut')) {
    const body = path === '/deflate' ? zlib.deflateSync(pattern(100000))
      : path === '/deflate-raw' ? zlib.deflateRawSync(pattern(100000))
        : zlib.gzipSync(pattern(100000)).subarray(0, 1000)
    const encoding = path === '/gzip-cut' ? 'gzip' : 'deflate'
    return respond(200, { 'content-type': 'application/octet-stream', 'content-encoding': encoding, 'content-length': String(body.length) }, body)
  }
  if (method === 'GET' && path === '/refuse-once') {
    if (refused++ === 0) return respond(-1)
    return respond(200, { 'content-type': 'text/plain' }, Buffer.from('ok'))
  }
  respond(404, { 'content-type': 'text/plain' }, Buffer.from('not found'))
}

// spdy-transport's pushed SYN_STREAMs carry flags 0 (the spec wants UNIDIRECTIONAL),
// always :scheme https, even on a plaintext connection, and in SPDY/2 a relative url.
// Unless --raw-pushes, fix these on
// this connection's framer so the test judges speedy's push handling, not these quirks
// (speedy's engine refuses a push without UNIDIRECTIONAL; see the closing report).
function shimPushes (conn, scheme) {
  const framer = conn._spdyState.framer
  const pushFrame = framer.pushFrame
  framer.pushFrame = function (frame, callback) {
    frame.scheme = scheme
    // SPDY/2 names a pushed resource by its absolute URL (draft 2, 3.3.1).
    if (this.version === 2) frame.path = scheme + '://' + frame.host + frame.path
    if (!args.lateStatus || this.version === 2) return pushFrame.call(this, frame, callback)
    // --late-status: the push's SYN_STREAM carries only the request part; :status and
    // the response headers follow in a HEADERS frame (SPDY/3 3.3.1 allows both).
    const self = this
    this._checkPush((err) => {
      if (err) return callback(err)
      self._synFrame({
        id: frame.promisedId,
        associated: frame.id,
        method: frame.method,
        scheme: frame.scheme,
        host: frame.host,
        path: frame.path,
        priority: frame.priority,
        headers: Object.assign({}, frame.headers)
      }, callback)
    })
  }
  const rawFrame = framer._frame
  framer._frame = function (frame, body, callback) {
    if (frame.type === 'SYN_STREAM' && frame.id % 2 === 0) frame.flags |= 0x02
    return rawFrame.call(this, frame, body, callback)
  }
}

function serveSpdy (socket, version, scheme) {
  socket.setNoDelay(true)
  const transport = require('spdy-transport')
  const conn = transport.connection.create(socket, {
    protocol: 'spdy', isServer: true, headerCompression: true
  })
  conn.on('error', (err) => process.stderr.write('server.js: connection error ' + err.message + '\n'))
  if (!args.rawPushes) shimPushes(conn, scheme)
  // spdy-transport wants 8 bytes of GOAWAY in every version; SPDY/2's carries 4.
  const parser = conn._spdyState.parser
  const onGoaway = parser.onGoawayFrame
  parser.onGoawayFrame = function (body, callback) {
    if (this.version === 2 && body.size === 4) {
      return callback(null, { type: 'GOAWAY', lastId: body.readUInt32BE() & 0x7fffffff, code: 'OK' })
    }
    return onGoaway.call(this, body, callback)
  }
  conn.start(version)
  conn.on('stream', (stream) => {
    const chunks = []
    stream.on('data', (c) => chunks.push(c))
    stream.on('error', () => {})
    stream.on('end', () => {
      const respond = (status, headers, body) => {
        if (status < 0) return stream.abort('REFUSED_STREAM')
        stream.respond(status, headers)
        stream.end(body)
      }
      const push = (path, host, body, then) => {
        stream.pushPromise({
          path: path,
          host: host || stream.host,
          method: 'GET',
          status: 200,
          priority: 5,
          headers: {},
          response: { 'content-type': 'application/javascript' }
        }, (err, p) => {
          if (err) { process.stderr.write('server.js: push failed ' + err.message + '\n'); return then() }
          p.on('error', () => {})
          if (args.lateStatus && version !== 2) {
            conn._spdyState.framer.headersFrame({
              id: p.id,
              headers: { ':status': '200 OK', ':version': 'HTTP/1.1', 'content-type': 'application/javascript' }
            }, () => p.end(body))
          } else {
            p.end(body)
          }
          then()
        })
      }
      if (stream.path === '/goaway-once' && goaways++ === 0) {
        // GOAWAY naming this stream the last good one: the client must retry the
        // streams it opened after it on a new session.
        conn._spdyState.framer.goawayFrame({ lastId: stream.id, code: 'OK' })
        return respond(200, { 'content-type': 'text/plain' }, Buffer.from('ok'))
      }
      route(stream.method, stream.path, Buffer.concat(chunks), respond, push)
    })
    stream.resume()
  })
}

function versionOf (protocol) {
  return { 'spdy/3.1': 3.1, 'spdy/3': 3, 'spdy/2': 2 }[protocol]
}

let server
if (args.http1) {
  const handler = (req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => route(req.method, req.url, Buffer.concat(chunks), (status, headers, body) => {
      if (status < 0) { req.socket.destroy(); return }
      res.writeHead(status, headers)
      res.end(body)
    }, null))
  }
  server = args.tls
    ? require('https').createServer({ cert: fs.readFileSync(args.tls.cert), key: fs.readFileSync(args.tls.key) }, handler)
    : require('http').createServer(handler)
} else if (args.tls) {
  const options = { cert: fs.readFileSync(args.tls.cert), key: fs.readFileSync(args.tls.key) }
  if (!args.noAlpn) options.ALPNProtocols = args.protocols
  server = tls.createServer(options, (socket) => {
    const version = args.noAlpn ? Number(args.version) : versionOf(socket.alpnProtocol)
    if (!version) { socket.destroy(); return }
    serveSpdy(socket, version, 'https')
  })
} else {
  server = net.createServer((socket) => serveSpdy(socket, Number(args.version), 'http'))
}

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n')
})
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
setTimeout(() => process.exit(1), 60000).unref()
