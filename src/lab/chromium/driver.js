#!/usr/bin/env node
// driver.js — one page load of a plan in headless Chromium, for `speedy lab run --client
// chromium` (docs/lab.md, "Chromium as the client"). Runs inside the client namespace:
// starts Chromium with a fresh profile, maps the plan's hosts to the replay addresses,
// trusts the lab's leaf key by its SPKI hash, forces HTTP/1.1 (or, with --h2, lets it speak
// HTTP/2, which it does over TLS only), drives it over the DevTools protocol
// (chrome-remote-interface), and appends one speedy-lab-result/1 line (docs/lab-formats.md)
// with "client": "chromium" and what its renderer's main thread did up to the load event.
//
//   node driver.js --plan P --result F [--single ADDR | --addr-base A | --host-addr I=ADDR...]
//                  [--h2] [--tls --spki HASH] [--repetition N] [--timeout S]
//                  [--chromium PATH] [--dispatch fcfs]
//
// HTTP/2 header bytes: DevTools shows header fields, not HPACK's bytes, so with --h2 the
// browser writes a net log with the TLS plaintext (--net-log-capture-mode=Everything) and
// the HEADERS, CONTINUATION and PUSH_PROMISE frames in it are counted, frame header
// included, as speedy load counts its own.
//
// $SPEEDY_CHROMIUM_NETLOG=DIR keeps each load's net log in DIR (over HTTP/1.1 too, where
// none is written otherwise), named after the recording, the protocol and the repetition:
// the sockets Chromium opened, used and closed (docs/lab.md, "The loader against Chromium").
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const CDP = require('chrome-remote-interface');

function parseArgs(argv) {
  const o = { repetition: 1, timeout: 120, chromium: '/usr/bin/chromium', tls: false,
              hostAddr: new Map(), h2: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--plan') o.plan = next();
    else if (a === '--result') o.result = next();
    else if (a === '--single') o.single = next();
    else if (a === '--addr-base') o.addrBase = next();
    else if (a === '--host-addr') {
      const m = /^(\d+)=(.+?)(:\d+)?$/.exec(next());
      if (!m) throw new Error('--host-addr wants I=ADDR[:PORT]');
      o.hostAddr.set(Number(m[1]), m[2]);
    } else if (a === '--h2') o.h2 = true;
    else if (a === '--tls') o.tls = true;
    else if (a === '--spki') o.spki = next();
    else if (a === '--repetition') o.repetition = Number(next());
    else if (a === '--timeout') o.timeout = Number(next());
    else if (a === '--chromium') o.chromium = next();
    else if (a === '--dispatch') o.dispatch = next();
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.plan || !o.result) throw new Error('--plan and --result are required');
  return o;
}

// 198.19.0.1 + i, as the lab numbers the server addresses.
function addrOf(base, i) {
  const p = base.split('.').map(Number);
  p[3] += i;
  return p.join('.');
}

function hostRules(plan, o) {
  const rules = [];
  plan.hosts.forEach((h, i) => {
    const name = h.name.replace(/^\[|\]$/g, '');
    const addr = o.single            ? o.single.replace(/:\d+$/, '')
                 : o.hostAddr.has(i) ? o.hostAddr.get(i)
                                     : addrOf(o.addrBase || '198.19.0.1', i);
    rules.push(`MAP ${name} ${addr}`);
  });
  rules.push('EXCLUDE localhost');
  return rules.join(', ');
}

function waitFile(file, ms) {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      try {
        const t = fs.readFileSync(file, 'utf8');
        if (t.includes('\n')) return resolve(t);
      } catch (e) {
        /* not yet */
      }
      if (Date.now() > until) return reject(new Error(`Chromium did not start (${file})`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

function round1(x) {
  return x == null || !isFinite(x) ? null : Math.round(x * 10) / 10;
}

// Bytes of HTTP/2 header frames (HEADERS, PUSH_PROMISE, CONTINUATION: 9 bytes of frame
// header and the block) in a net log's TLS plaintext, per direction; null when the log
// cannot be read. The client's connection preface is skipped.
function h2HeaderBytes(file) {
  let log;
  try {
    const text = fs.readFileSync(file, 'utf8');
    try {
      log = JSON.parse(text);
    } catch (e) {
      log = JSON.parse(text.replace(/,?\s*$/, '') + ']}'); // a log cut short
    }
  } catch (e) {
    return null;
  }
  const types = log.constants && log.constants.logEventTypes;
  if (!types || !Array.isArray(log.events)) return null;
  const sent = types.SSL_SOCKET_BYTES_SENT, received = types.SSL_SOCKET_BYTES_RECEIVED;
  const streams = new Map(); // source id and direction -> Buffer chunks
  for (const e of log.events) {
    if ((e.type !== sent && e.type !== received) || !e.params || !e.params.bytes) continue;
    const key = `${e.source.id}/${e.type === sent ? 'up' : 'down'}`;
    if (!streams.has(key)) streams.set(key, []);
    streams.get(key).push(Buffer.from(e.params.bytes, 'base64'));
  }
  const bytes = { up: 0, down: 0 };
  for (const [key, chunks] of streams) {
    let b = Buffer.concat(chunks), at = 0;
    const preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
    if (b.slice(0, preface.length).toString('latin1') === preface) at = preface.length;
    else if (key.endsWith('/up')) continue; // not an HTTP/2 connection
    let n = 0;
    while (at + 9 <= b.length) {
      const length = b.readUIntBE(at, 3), type = b[at + 3];
      if (type === 0x1 || type === 0x5 || type === 0x9) n += 9 + length;
      at += 9 + length;
    }
    bytes[key.endsWith('/up') ? 'up' : 'down'] += n;
  }
  return bytes;
}

// What Chromium's renderer spent its main thread on since Performance.enable (DevTools'
// Performance.getMetrics, cumulative seconds), in ms: every task, and within them script,
// style recalculation and layout; null when not told.
async function browserWork(Performance) {
  try {
    const { metrics } = await Performance.getMetrics();
    const m = new Map(metrics.map((x) => [x.name, x.value]));
    const ms = (name) => (m.has(name) ? round1(m.get(name) * 1000) : null);
    return { tasks_ms: ms('TaskDuration'), script_ms: ms('ScriptDuration'),
             style_ms: ms('RecalcStyleDuration'), layout_ms: ms('LayoutDuration') };
  } catch (e) {
    return null;
  }
}

async function load(o, plan) {
  const keepNetLog = process.env.SPEEDY_CHROMIUM_NETLOG;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'speedy-chromium-'));
  const netLog = path.join(profile, 'netlog.json');
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ...(o.h2 ? [`--log-net-log=${netLog}`, '--net-log-capture-mode=Everything']
             : ['--disable-http2', ...(keepNetLog ? [`--log-net-log=${netLog}`] : [])]),
    // One renderer for every frame (so one DevTools target sees every request), and no
    // automatic https:// attempts for http:// pages (TLS-off runs listen on port 80 only).
    '--disable-features=IsolateOrigins,site-per-process,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable',
    '--disable-site-isolation-trials', '--disable-dev-shm-usage', `--user-data-dir=${profile}`,
    `--host-resolver-rules=${hostRules(plan, o)}`, '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0', 'about:blank',
  ];
  if (o.spki) args.push(`--ignore-certificate-errors-spki-list=${o.spki}`);
  const chrome = spawn(o.chromium, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let chromeErr = '';
  chrome.stderr.on('data', (d) => {
    chromeErr = (chromeErr + d).slice(-2000);
  });
  let client, ret;
  try {
    const port = Number((await waitFile(path.join(profile, 'DevToolsActivePort'), 15000))
                            .split('\n')[0]);
    client = await CDP({ host: '127.0.0.1', port });
    const { Network, Page, Performance, Runtime } = client;
    const requests = new Map();
    const all = []; // every request, redirects included, in the order they began
    client.on('Network.requestWillBeSent', (p) => {
      const old = requests.get(p.requestId);
      if (old && p.redirectResponse) {
        // The redirect keeps its own entry; the request it leads to takes the id.
        old.status = p.redirectResponse.status;
        old.protocol = p.redirectResponse.protocol;
        old.connection = p.redirectResponse.connectionId;
        old.end = p.timestamp;
        old.bytes = p.redirectResponse.encodedDataLength || 0;
        // Chromium's own redirects (HSTS preload list, upgrades) never reach the network.
        old.internal = p.redirectResponse.statusText === 'Internal Redirect';
        const timing = p.redirectResponse.timing;
        if (timing) old.ttfb = timing.requestTime + timing.receiveHeadersEnd / 1000;
      }
      const r = { url: p.request.url, start: p.timestamp };
      all.push(r);
      requests.set(p.requestId, r);
    });
    client.on('Network.requestWillBeSentExtraInfo', (p) => {
      const r = requests.get(p.requestId);
      if (!r || !p.headers) return;
      // name: value CRLF per field, the request line and a final CRLF (HTTP/1.1).
      r.requestHeaderBytes = Object.entries(p.headers)
                                 .reduce((n, [k, v]) => n + k.length + String(v).length + 4,
                                         r.url.length + 16);
    });
    client.on('Network.responseReceivedExtraInfo', (p) => {
      const r = requests.get(p.requestId);
      if (r && p.headersText) r.responseHeaderBytes = p.headersText.length;
    });
    client.on('Network.responseReceived', (p) => {
      const r = requests.get(p.requestId);
      if (!r) return;
      const res = p.response;
      r.status = res.status;
      r.protocol = res.protocol;
      r.connection = res.connectionId;
      r.headersText = res.headersText;
      if (res.timing) {
        r.requestTime = res.timing.requestTime;
        r.ttfb = res.timing.requestTime + res.timing.receiveHeadersEnd / 1000;
      }
    });
    client.on('Network.loadingFinished', (p) => {
      const r = requests.get(p.requestId);
      if (!r) return;
      r.end = p.timestamp;
      r.bytes = p.encodedDataLength;
    });
    client.on('Network.loadingFailed', (p) => {
      const r = requests.get(p.requestId);
      if (!r) return;
      r.end = p.timestamp;
      r.error = p.errorText || 'failed';
    });
    await Network.enable();
    await Network.setCacheDisabled({ cacheDisabled: true });
    await Page.enable();
    await Performance.enable({ timeDomain: 'timeTicks' });
    const doc = plan.resources[0];
    const host = plan.hosts[doc.host].name;
    const url = `${o.tls ? 'https' : 'http'}://${host}${doc.path}`;
    const loaded = new Promise((resolve) => client.once('Page.loadEventFired', resolve));
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), o.timeout * 1000));
    const nav = await Page.navigate({ url });
    const outcome = nav.errorText ? nav.errorText : await Promise.race([loaded, timeout]);
    // The renderer's own work up to the load event (asked for as it fires).
    const work = typeof outcome === 'object' ? await browserWork(Performance) : null;
    // Requests the load event does not wait for (inserted late, fetch()) are let finish:
    // until none is in flight for 300 ms, at most 5 s after the load event.
    const settleUntil = Date.now() + 5000;
    let quietSince = Date.now();
    while (Date.now() < settleUntil && Date.now() - quietSince < 300) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (all.some((r) => r.end == null)) quietSince = Date.now();
    }
    const t = await Runtime.evaluate({
      returnByValue: true,
      expression: `(() => { const n = performance.getEntriesByType('navigation')[0] || {};
        const f = performance.getEntriesByName('first-contentful-paint')[0];
        return { load: n.loadEventStart || null, fcp: f ? f.startTime : null,
                 origin: performance.timeOrigin }; })()`,
    });
    ret = { outcome, timing: t.result.value || {}, requests: all, work };
    return ret;
  } finally {
    // Closed by DevTools, Chromium ends its helpers and stops writing its profile; killed
    // only when it does not exit within 3 s.
    const exited = new Promise((resolve) => {
      if (chrome.exitCode !== null || chrome.signalCode !== null) resolve();
      else chrome.once('exit', resolve);
    });
    if (client) {
      await client.Browser.close().catch(() => {});
      await client.close().catch(() => {});
    }
    const killer = setTimeout(() => chrome.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
    if (o.h2 && ret) ret.h2Headers = h2HeaderBytes(netLog);
    if (keepNetLog) {
      // $SPEEDY_CHROMIUM_NETLOG: keep the load's net log (sockets opened, used, closed).
      const name = `${path.basename(plan.source || 'page')}-${o.h2 ? 'h2' : 'http1'}` +
                   `-r${o.repetition}-${process.pid}.json`;
      try {
        fs.copyFileSync(netLog, path.join(keepNetLog, name.replace(/[^A-Za-z0-9._-]/g, '_')));
      } catch (e) {
        process.stderr.write(`speedy lab chromium driver: net log not kept: ${e.message}\n`);
      }
    }
    try {
      // Chromium's helpers may still be writing for a moment after it exits.
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) {
      process.stderr.write(`speedy lab chromium driver: ${profile} left: ${e.message}\n`);
    }
    if (process.env.SPEEDY_CHROMIUM_LOG) process.stderr.write(chromeErr);
  }
}

function findResource(plan, url) {
  let u;
  try {
    u = new URL(url);
  } catch (e) {
    return -1;
  }
  const name = u.hostname.toLowerCase();
  // The target as sent, from the text: URL's search drops a bare trailing '?'.
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^#]*)/i.exec(url);
  const p = m && m[1] ? (m[1][0] === '?' ? `/${m[1]}` : m[1]) : '/';
  const hostName = (i) => plan.hosts[i].name.replace(/^\[|\]$/g, '');
  for (const r of plan.resources)
    if (hostName(r.host) === name && r.path === p) return r.id;
  // A one-host plan names host h's /path as /.host/h/path on the page's host (replay.h).
  const one = plan.one_host && plan.resources.length ? /^\/\.host\/(\d{1,5})(\/.*)$/.exec(p) : null;
  if (one && hostName(plan.resources[0].host) === name)
    for (const r of plan.resources)
      if (r.host === Number(one[1]) && r.path === one[2]) return r.id;
  return -1;
}

function result(o, plan, run) {
  const reqs = run.requests.filter((r) => /^https?:/.test(r.url) && !r.internal);
  const doc = reqs.length ? reqs[0] : null;
  const t0 = doc ? doc.start : 0;
  const rel = (x) => (x == null ? null : round1((x - t0) * 1000));
  const connections = new Set();
  let bytesDown = 0, reqHdr = 0, respHdr = 0, failed = 0, unfinished = 0, lastEnd = null, lastEndCut = null;
  const resources = reqs.map((r) => {
    const id = findResource(plan, r.url);
    if (r.connection != null) connections.add(r.connection);
    bytesDown += r.bytes || 0;
    reqHdr += r.requestHeaderBytes || 0;
    respHdr += r.responseHeaderBytes || 0;
    if (r.error) failed++;
    else if (r.end == null) unfinished++;
    const end = rel(r.end);
    if (end != null && (lastEnd == null || end > lastEnd)) lastEnd = end;
    const cut = id >= 0 && plan.resources[id].after_cutoff;
    if (end != null && !cut && (lastEndCut == null || end > lastEndCut)) lastEndCut = end;
    return {
      id, url: r.url, start_ms: rel(r.start), ttfb_ms: rel(r.ttfb), end_ms: end,
      bytes: r.bytes || 0, status: r.status || 0, protocol: r.protocol || null,
      connection: r.connection != null ? Number(r.connection) : -1, error: r.error || null,
    };
  });
  const plt = run.timing.load != null ? round1(run.timing.load) : null;
  // Hosts on Chromium's built-in HSTS preload list go to https whatever the page says.
  const upgraded = [...new Set(run.requests.filter((r) => r.internal && /^http:/.test(r.url))
                                 .map((r) => new URL(r.url).hostname))];
  let reason = '';
  // A recording without the page's document (its first resource, after its redirects, is a
  // script or an image): a browser can only open that resource, not the page the loader loads.
  let page = plan.resources.length ? plan.resources[0] : null;
  for (let hops = 0; page && page.redirect_to >= 0 && hops < 20; hops++)
    page = plan.resources[page.redirect_to]; // a browser follows the first answer's redirects
  const first = page ? page.type : 'nothing';
  if (first !== 'document')
    reason = `the recording lacks the page's document (its first resource is ${first}): ` +
             'a browser has no page to open';
  else if (run.outcome === 'timeout') reason = `no load event within ${o.timeout} s`;
  else if (typeof run.outcome === 'string') reason = `navigation failed: ${run.outcome}`;
  else if (!plt || plt <= 0) reason = 'no load event time';
  else if (failed) reason = `${failed} of ${reqs.length} requests failed`;
  else if (unfinished) reason = `${unfinished} of ${reqs.length} requests unfinished 5 s after the load event`;
  const want = o.h2 ? 'h2' : 'http/1.1';
  const other = reqs.filter((r) => !r.error && r.protocol && r.protocol !== want);
  if (!reason && other.length)
    reason = `${other.length} of ${reqs.length} requests over ${other[0].protocol}, not ${want}` +
             ` (first ${other[0].url})`;
  if (o.h2) {
    // HPACK's bytes from the net log (h2HeaderBytes), not DevTools' header text.
    reqHdr = run.h2Headers ? run.h2Headers.up : 0;
    respHdr = run.h2Headers ? run.h2Headers.down : 0;
    if (!reason && !run.h2Headers) reason = 'no net log to count HTTP/2 header bytes in';
  }
  if (reason && !o.tls && upgraded.length)
    reason += ` (Chromium sends ${upgraded.slice(0, 3).join(', ')} to https by its HSTS preload` +
              ' list: load this page with TLS on)';
  const matched = new Set(resources.filter((r) => r.id >= 0).map((r) => r.id));
  return {
    format: 'speedy-lab-result/1',
    plan: `${plan.source}#${plan.page}`,
    protocol: want,
    mode: o.single ? 'single-domain' : o.hostAddr.size ? 'coalesced' : 'multi-domain',
    dispatch: 'browser',
    tls: o.tls,
    push: false,
    hint: false,
    link: null,
    repetition: o.repetition,
    seed: plan.seed,
    valid: reason === '',
    invalid_reason: reason,
    plt_ms: plt,
    plt_cutoff_ms: plt,
    last_byte_ms: lastEnd,
    last_byte_cutoff_ms: lastEndCut,
    fcp_ms: round1(run.timing.fcp),
    ttfb_ms: doc ? rel(doc.ttfb) : null,
    bytes_up: null,
    bytes_down: bytesDown,
    bytes_counted_by: 'loader',
    connections: connections.size,
    tcp_retransmits: null,
    tcp_timeouts: null,
    lower_bound_ms: null,
    request_header_bytes: reqHdr,
    response_header_bytes: respHdr,
    pushed: 0,
    hinted: 0,
    requests: reqs.length,
    plan_resources_fetched: matched.size,
    plan_resources: plan.resources.length,
    resources,
    client: 'chromium',
    browser_work: run.work,
    settings: { loader: 'chromium', timeout_ms: o.timeout * 1000 },
  };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const plan = JSON.parse(fs.readFileSync(o.plan, 'utf8'));
  const run = await load(o, plan);
  fs.appendFileSync(o.result, JSON.stringify(result(o, plan, run)) + '\n');
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`speedy lab chromium driver: ${e.message}\n`);
    process.exit(1);
  });
