// h2_node_client.js — node's built-in http2 client (a peer we did not write) against speedyd.
//
//   node h2_node_client.js URL UPLOAD_FILE [CA_FILE] [--no-push]
//
// URL is http://127.0.0.1:PORT (h2c, prior knowledge) or https://localhost:PORT (h2 by
// ALPN, CA_FILE trusted). On one session: GET / (collecting its pushes and any 1xx
// headers), /empty.bin, /kib.bin, /large.bin, and a POST of UPLOAD_FILE to /upload. Prints
// one JSON object: {alpn, responses: {path: {status, sha256, link}}, informational: [...],
// pushes: {path: {status, sha256}}, upload: {status, sha256}}. --no-push announces
// SETTINGS_ENABLE_PUSH 0. Gives up after 20 s.
'use strict';
const http2 = require('http2');
const crypto = require('crypto');
const fs = require('fs');

const args = process.argv.slice(2).filter((a) => a !== '--no-push');
const [url, uploadFile, caFile] = args;
const options = caFile ? { ca: fs.readFileSync(caFile) } : {};
if (process.argv.includes('--no-push')) options.settings = { enablePush: false };
const timer = setTimeout(() => {
  console.error('h2_node_client: timed out');
  process.exit(1);
}, 20000);

const result = { alpn: null, responses: {}, informational: [], pushes: {}, upload: null };
const session = http2.connect(url, options);
session.on('error', (e) => {
  console.error('h2_node_client: session error: ' + e.message);
  process.exit(1);
});
session.on('connect', () => {
  result.alpn = session.alpnProtocol;
});

const pending = [];

// Reads a stream whole: resolves {status, sha256, link}.
function collect(stream, onHeaders) {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    let headers = {};
    stream.on('headers', (h) => result.informational.push(h)); // 1xx only
    stream.on('response', (h) => {
      headers = h;
      if (onHeaders) onHeaders(h);
    });
    stream.on('push', (h) => {
      headers = h; // a pushed stream's response headers
    });
    stream.on('data', (d) => hash.update(d));
    stream.on('end', () =>
      resolve({ status: headers[':status'], sha256: hash.digest('hex'), link: headers.link || null })
    );
    stream.on('error', reject);
  });
}

session.on('stream', (pushed, requestHeaders) => {
  pending.push(
    collect(pushed).then((r) => {
      result.pushes[requestHeaders[':path']] = r;
    })
  );
});

async function main() {
  const paths = ['/', '/empty.bin', '/kib.bin', '/large.bin'];
  const gets = paths.map((p) =>
    collect(session.request({ ':path': p })).then((r) => {
      result.responses[p] = r;
    })
  );
  const body = fs.readFileSync(uploadFile);
  const post = session.request({
    ':method': 'POST',
    ':path': '/upload',
    'content-length': String(body.length),
  });
  post.end(body);
  gets.push(
    collect(post).then((r) => {
      result.upload = r;
    })
  );
  await Promise.all(gets);
  // Pushed streams may still be finishing after the page.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await Promise.all(pending);
  console.log(JSON.stringify(result));
  clearTimeout(timer);
  session.close();
}

main().catch((e) => {
  console.error('h2_node_client: ' + e.message);
  process.exit(1);
});
