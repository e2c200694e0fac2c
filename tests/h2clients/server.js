// server.js DIR PORT_FILE [CERT KEY] — node's built-in http2 server for the client tests:
// h2c (prior knowledge) without CERT and KEY, TLS with ALPN h2 with them. GET /NAME serves
// DIR/NAME (404 when missing); POST /upload answers the sha256 (hex) of the request body.
// Listens on 127.0.0.1, an ephemeral port written to PORT_FILE. Runs until killed.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http2 = require('http2');
const path = require('path');

const [dir, portFile, cert, key] = process.argv.slice(2);
const options = {settings: {maxConcurrentStreams: 128}};
const server = cert ? http2.createSecureServer({...options, cert: fs.readFileSync(cert),
                                                key: fs.readFileSync(key)})
                    : http2.createServer(options);
server.on('stream', (stream, headers) => {
  stream.on('error', () => {});
  const method = headers[':method'];
  const name = path.basename((headers[':path'] || '/').split('?')[0]);
  if (method === 'POST' && headers[':path'] === '/upload') {
    const hash = crypto.createHash('sha256');
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('end', () => {
      const body = hash.digest('hex');
      stream.respond({':status': 200, 'content-length': body.length});
      stream.end(body);
    });
    return;
  }
  const file = path.join(dir, name);
  fs.readFile(file, (err, data) => {
    if (err || !name) {
      stream.respond({':status': 404});
      stream.end('not found\n');
      return;
    }
    stream.respond({':status': 200, 'content-length': data.length});
    stream.end(data);
  });
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile + '.tmp', String(server.address().port));
  fs.renameSync(portFile + '.tmp', portFile);
});
