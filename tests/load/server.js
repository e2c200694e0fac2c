'use strict'
// server.js — a stand-in replay server for the tests of `speedy load`: serves the
// resources of a page plan (speedy-lab-plan/1) over SPDY (node's spdy-transport, an
// independent implementation) or HTTP/1.1 (node's http/https), plaintext or TLS, and logs
// what it saw so the test can check the loader's behaviour from the outside.
//
//   node server.js --plan FILE [--single] [--http1 | --h2] [--version 3.1|3|2] [--tls CERT KEY]
//                  [--sni NAME CERT KEY] [--push ID,...] [--hint ID,...] [--wrong-size ID]
//                  [--missing ID] [--stall ID] [--chunk-ms MS] --log FILE
//
// --h2: HTTP/2 by node's own http2 module (ALPN h2 with --tls, prior knowledge without);
// --hint then sends a 103 Early Hints whose Link names the resources (rel=preload) before
// resource 0's answer, and no X-Subresources. --sni: TLS connections that ask for NAME get
// that certificate instead (a host the default certificate does not name).
//
// Multi-domain (default): one listening port per plan host, host i answers only host i's
// resources. --single: one port for every host, the resource chosen by Host / :host.
// Prints {"ports":[...]} on stdout once listening; exits when stdin closes or after 80 s.
//
// Responses: the plan's status and response headers, content-length = body_size, a
// Location for redirects, body_size pattern bytes. Resource 0's body is sent in 8 KiB
// chunks --chunk-ms apart (default 60) so that discovery by offset can be observed.
// --push: the listed resources are pushed with resource 0's response (SPDY only).
// --hint: resource 0's response carries X-Subresources naming the listed resources.
// --wrong-size: that resource's body is one byte short (content-length says so too).
// --missing: that resource answers 404. --stall: that resource never answers.
//
// Log (JSON lines): {"ev":"conn","port":P,"conn":N,"t":ms}
//   {"ev":"req","id":I,"host":H,"path":P,"conn":N,"t":ms,"priority":U}
//   {"ev":"chunk","id":0,"bytes":B,"t":ms}  (after B body bytes of resource 0 were written)
//   {"ev":"end","id":I,"t":ms}              (the last byte of I's response was written)

const fs = require('fs')
const net = require('net')
const tls = require('tls')

const args = { plan: null, single: false, http1: false, h2: false, sni: {}, version: '3.1', tls: null, push: [], hint: [], wrongSize: -1, missing: -1, stall: -1, chunkMs: 60, log: null }
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]
  const ids = () => process.argv[++i].split(',').map(Number)
  if (a === '--plan') args.plan = JSON.parse(fs.readFileSync(process.argv[++i], 'utf8'))
  else if (a === '--single') args.single = true
  else if (a === '--http1') args.http1 = true
  else if (a === '--h2') args.h2 = true
  else if (a === '--sni') {
    const name = process.argv[++i]
    args.sni[name] = tls.createSecureContext({ cert: fs.readFileSync(process.argv[++i]), key: fs.readFileSync(process.argv[++i]) })
  }
  else if (a === '--version') args.version = process.argv[++i]
  else if (a === '--tls') args.tls = { cert: fs.readFileSync(process.argv[++i]), key: fs.readFileSync(process.argv[++i]) }
  else if (a === '--push') args.push = ids()
  else if (a === '--hint') args.hint = ids()
  else if (a === '--wrong-size') args.wrongSize = Number(process.argv[++i])
  else if (a === '--missing') args.missing = Number(process.argv[++i])
  else if (a === '--stall') args.stall = Number(process.argv[++i])
  else if (a === '--chunk-ms') args.chunkMs = Number(process.argv[++i])
  else if (a === '--log') args.log = process.argv[++i]
  else { process.stderr.write('server.js: unknown argument ' + a + '\n'); process.exit(2) }
}
const plan = args.plan
const t0 = process.hrtime.bigint()
const now = () => Number(process.hrtime.bigint() - t0) / 1e6
const logFd = fs.openSync(args.log, 'a')
const log = (o) => { o.t = now(); fs.writeSync(logFd, JSON.stringify(o) + '\n') }

function pattern (n) {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 0xff
  return b
}

// The resource for a host name (port stripped) and path, on a server for `hostIndex`
// (-1: single-domain, any host).
function find (hostIndex, hostName, path) {
  const name = String(hostName || '').replace(/:\d+$/, '').toLowerCase()
  const h = plan.hosts.findIndex((x) => x.name.toLowerCase() === name)
  if (h < 0 || (hostIndex >= 0 && h !== hostIndex)) return null
  return plan.resources.find((r) => r.host === h && r.path === path) || null
}

function urlOf (r, scheme) {
  return scheme + '://' + plan.hosts[r.host].name + r.path
}

// What to send for r: status, headers, body.
function answer (r, scheme) {
  if (!r || r.id === args.missing) return { status: 404, headers: { 'content-type': 'text/plain' }, body: Buffer.from('not found') }
  const headers = {}
  for (const [k, v] of r.response_headers || []) headers[k] = v
  let size = r.body_size
  if (r.id === args.wrongSize) size = Math.max(0, size - 1)
  headers['content-length'] = String(size)
  if (r.redirect_to >= 0) headers.location = urlOf(plan.resources[r.redirect_to], scheme)
  if (r.id === 0 && args.hint.length && !args.h2) headers['x-subresources'] = args.hint.map((i) => urlOf(plan.resources[i], scheme)).join(', ')
  return { status: r.status, headers, body: pattern(size) }
}

// Writes body to a stream-like (write/end); resource 0 in timed chunks.
function sendBody (r, out, body) {
  if (!r || r.id !== 0) { out.end(body); if (r) log({ ev: 'end', id: r.id }); return }
  let at = 0
  const step = () => {
    const n = Math.min(8192, body.length - at)
    out.write(body.subarray(at, at + n))
    at += n
    log({ ev: 'chunk', id: 0, bytes: at })
    if (at < body.length) return setTimeout(step, args.chunkMs)
    out.end()
    log({ ev: 'end', id: 0 })
  }
  step()
}

let connections = 0

function serveHttp1 (hostIndex, scheme) {
  const handler = (req, res) => {
    const r = find(hostIndex, req.headers.host, req.url)
    log({ ev: 'req', id: r ? r.id : -1, host: req.headers.host, path: req.url, conn: req.socket._loadConn, ua: req.headers['user-agent'] || '' , headers: req.headers })
    req.resume()
    req.on('end', () => {
      if (r && r.id === args.stall) return
      const a = answer(r, scheme)
      res.writeHead(a.status, a.headers)
      sendBody(r, res, a.body)
    })
  }
  const server = args.tls
    ? require('https').createServer({ cert: args.tls.cert, key: args.tls.key, ALPNProtocols: ['http/1.1'] }, handler)
    : require('http').createServer(handler)
  server.on(args.tls ? 'secureConnection' : 'connection', (socket) => {
    socket._loadConn = connections++
    log({ ev: 'conn', port: server.address().port, conn: socket._loadConn })
  })
  return server
}

// spdy-transport's pushes lack UNIDIRECTIONAL and always say https; fixed as in
// tests/get/server.js so that the loader is judged, not these quirks.
function shimPushes (conn, scheme) {
  const framer = conn._spdyState.framer
  const pushFrame = framer.pushFrame
  framer.pushFrame = function (frame, callback) {
    frame.scheme = scheme
    if (this.version === 2) frame.path = scheme + '://' + frame.host + frame.path
    return pushFrame.call(this, frame, callback)
  }
  const rawFrame = framer._frame
  framer._frame = function (frame, body, callback) {
    if (frame.type === 'SYN_STREAM' && frame.id % 2 === 0) frame.flags |= 0x02
    return rawFrame.call(this, frame, body, callback)
  }
}

function serveSpdy (socket, version, hostIndex, scheme, port) {
  socket.setNoDelay(true)
  const id = connections++
  log({ ev: 'conn', port, conn: id })
  const conn = require('spdy-transport').connection.create(socket, { protocol: 'spdy', isServer: true, headerCompression: true })
  conn.on('error', (err) => process.stderr.write('server.js: connection error ' + err.message + '\n'))
  shimPushes(conn, scheme)
  // spdy-transport wants 8 bytes of GOAWAY in every version; SPDY/2's carries 4.
  const parser = conn._spdyState.parser
  const onGoaway = parser.onGoawayFrame
  parser.onGoawayFrame = function (body, callback) {
    if (this.version === 2 && body.size === 4) return callback(null, { type: 'GOAWAY', lastId: body.readUInt32BE() & 0x7fffffff, code: 'OK' })
    return onGoaway.call(this, body, callback)
  }
  conn.start(version)
  conn.on('stream', (stream) => {
    const r = find(hostIndex, stream.host, stream.path)
    log({ ev: 'req', id: r ? r.id : -1, host: stream.host, path: stream.path, conn: id, priority: stream.priority ? stream.priority.priority : null, ua: stream.headers['user-agent'] || '' })
    stream.on('error', () => {})
    stream.resume()
    if (r && r.id === args.stall) return
    const a = answer(r, scheme)
    const respond = () => { stream.respond(a.status, a.headers); sendBody(r, stream, a.body) }
    const pushes = r && r.id === 0 ? args.push.slice() : []
    const next = () => {
      if (pushes.length === 0) return respond()
      const p = plan.resources[pushes.shift()]
      const pa = answer(p, scheme)
      stream.pushPromise({ path: p.path, host: plan.hosts[p.host].name, method: 'GET', status: pa.status, priority: 5, headers: {}, response: pa.headers }, (err, ps) => {
        if (err) { process.stderr.write('server.js: push failed ' + err.message + '\n'); return next() }
        ps.on('error', () => {})
        log({ ev: 'push', id: p.id, conn: id })
        ps.end(pa.body)
        log({ ev: 'end', id: p.id })
        next()
      })
    }
    next()
  })
}

function serveH2 (hostIndex, scheme) {
  const http2 = require('http2')
  const server = args.tls
    ? http2.createSecureServer({ cert: args.tls.cert, key: args.tls.key, ALPNProtocols: ['h2'], SNICallback: (name, cb) => cb(null, args.sni[name] || null) })
    : http2.createServer()
  server.on('session', (session) => {
    session._loadConn = connections++
    log({ ev: 'conn', port: server.address().port, conn: session._loadConn, sni: session.socket.servername || null })
  })
  server.on('stream', (stream, headers) => {
    const r = find(hostIndex, headers[':authority'], headers[':path'])
    log({ ev: 'req', id: r ? r.id : -1, host: headers[':authority'], path: headers[':path'], conn: stream.session._loadConn, ua: headers['user-agent'] || '' , headers })
    stream.on('error', () => {})
    stream.resume()
    if (r && r.id === args.stall) return
    const a = answer(r, scheme)
    if (r && r.id === 0 && args.hint.length) {
      const link = args.hint.map((i) => '<' + urlOf(plan.resources[i], scheme) + '>; rel=preload').join(', ')
      stream.additionalHeaders({ ':status': 103, link })
    }
    const h = { ':status': a.status }
    for (const [k, v] of Object.entries(a.headers)) h[k.toLowerCase()] = v
    stream.respond(h)
    sendBody(r, stream, a.body)
  })
  return server
}

function makeServer (hostIndex) {
  const scheme = args.tls ? 'https' : 'http'
  if (args.http1) return serveHttp1(hostIndex, scheme)
  if (args.h2) return serveH2(hostIndex, scheme)
  let server
  if (args.tls) {
    server = tls.createServer({ cert: args.tls.cert, key: args.tls.key, ALPNProtocols: ['spdy/3.1', 'spdy/3', 'spdy/2'] }, (socket) => {
      const version = { 'spdy/3.1': 3.1, 'spdy/3': 3, 'spdy/2': 2 }[socket.alpnProtocol]
      if (!version) return socket.destroy()
      serveSpdy(socket, version, hostIndex, scheme, server.address().port)
    })
  } else {
    server = net.createServer((socket) => serveSpdy(socket, Number(args.version), hostIndex, scheme, server.address().port))
  }
  return server
}

const servers = args.single ? [makeServer(-1)] : plan.hosts.map((h, i) => makeServer(i))
let listening = 0
for (const s of servers) {
  s.listen(0, '127.0.0.1', () => {
    if (++listening === servers.length) process.stdout.write(JSON.stringify({ ports: servers.map((x) => x.address().port) }) + '\n')
  })
}
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
setTimeout(() => process.exit(1), 80000).unref()
