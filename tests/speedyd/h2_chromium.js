// h2_chromium.js — loads pages in headless Chromium, one after another in one browser,
// and prints, as JSON ({page URL: [request, ...]}), what the DevTools Network domain
// reported for each request: the URL, its initiator type, the protocol, the status,
// whether the response came from 103 Early Hints, the hints the document got, and the
// times (DevTools monotonic seconds) the request was sent and its response received.
// test_h2_chromium.sh asserts on it.
//
//   node h2_chromium.js HOST_RULES SPKI_HASH TIMEOUT_MS URL...
'use strict';

const path = require('path');
const { launch } = require(path.join(__dirname, '..', '..', 'scripts', 'chromium', 'headless'));

async function main() {
  const [rules, spki, timeoutArg, ...urls] = process.argv.slice(2);
  const timeoutMs = Number(timeoutArg);
  const browser = await launch({
    args: [`--host-resolver-rules=${rules}`, `--ignore-certificate-errors-spki-list=${spki}`,
           '--disable-quic'],
  });
  const timer = setTimeout(() => {
    console.error(`h2_chromium.js: the pages did not load within ${timeoutMs} ms`);
    browser.close().finally(() => process.exit(1));
  }, timeoutMs);
  try {
    const { Network, Page } = browser.client;
    let requests = new Map();
    const entry = (id) => {
      if (!requests.has(id)) requests.set(id, { id });
      return requests.get(id);
    };
    browser.client.on('Network.requestWillBeSent', (p) => {
      const e = entry(p.requestId);
      Object.assign(e, { url: p.request.url, initiator: p.initiator.type, type: p.type,
                         sentAt: p.timestamp });
    });
    browser.client.on('Network.responseReceived', (p) => {
      const e = entry(p.requestId);
      Object.assign(e, { status: p.response.status, protocol: p.response.protocol,
                         fromEarlyHints: p.response.fromEarlyHints === true,
                         receivedAt: p.timestamp });
    });
    browser.client.on('Network.responseReceivedEarlyHints', (p) => {
      const e = entry(p.requestId);
      e.earlyHints = (e.earlyHints || 0) + 1;
      e.earlyHintsLink = p.headers.link || p.headers.Link || null;
    });
    browser.client.on('Network.loadingFailed', (p) => {
      entry(p.requestId).failed = p.errorText;
    });
    await Network.enable();
    await Page.enable();
    const pages = {};
    for (const url of urls) {
      requests = new Map();
      const loaded = Page.loadEventFired();
      await Page.navigate({ url });
      await loaded;
      pages[url] = [...requests.values()];
    }
    clearTimeout(timer);
    console.log(JSON.stringify(pages, null, 1));
  } finally {
    clearTimeout(timer);
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`h2_chromium.js: ${e.message}`);
  process.exit(1);
});
