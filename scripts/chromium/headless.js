// headless.js — one headless Chromium with a fresh profile, driven over the DevTools
// protocol (chrome-remote-interface). Shared by the programs and tests that load pages in
// Chromium, so starting it, finding its DevTools port and cleaning up live in one place:
//
//   const { launch } = require('<repo>/scripts/chromium/headless');
//   const browser = await launch({ args: ['--host-resolver-rules=MAP a.test 127.0.0.1'] });
//   const { Network, Page } = browser.client;   // a connected CDP client
//   ...
//   await browser.close();                       // ends Chromium, removes the profile
//
// Options: chromium (path, default /usr/bin/chromium), args (more switches, before the
// about:blank it opens), startMs (how long to wait for DevTools, default 15000).
// Runs as root too (--no-sandbox: the sandbox refuses root). Nothing else is assumed:
// callers add what they need (--disable-http2, --ignore-certificate-errors-spki-list...).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

// chrome-remote-interface from the repository's node_modules, wherever the caller runs.
const CDP = require(path.join(__dirname, '..', '..', 'node_modules', 'chrome-remote-interface'));

// Chromium writes "PORT\nPATH\n" to DevToolsActivePort once it listens.
function waitPortFile(file, ms, chrome) {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      try {
        const text = fs.readFileSync(file, 'utf8');
        if (text.includes('\n')) return resolve(Number(text.split('\n')[0]));
      } catch (e) {
        /* not written yet */
      }
      if (chrome.exitCode !== null) return reject(new Error(`Chromium exited (${chrome.exitCode})`));
      if (Date.now() > until) return reject(new Error('Chromium did not open its DevTools port'));
      setTimeout(tick, 20);
    };
    tick();
  });
}

async function launch(options = {}) {
  const chromium = options.chromium || '/usr/bin/chromium';
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'speedy-chromium-'));
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-dev-shm-usage', `--user-data-dir=${profile}`,
    '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0',
    ...(options.args || []), 'about:blank',
  ];
  const chrome = spawn(chromium, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  chrome.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const exited = new Promise((resolve) => chrome.once('exit', resolve));
  let client = null;
  const close = async () => {
    // Closed by DevTools, Chromium ends its helpers and stops writing its profile; killed
    // only if it does not go within 3 s.
    if (client) {
      await client.Browser.close().catch(() => {});
      await client.close().catch(() => {});
    }
    const killer = setTimeout(() => chrome.kill('SIGKILL'), 3000);
    if (chrome.exitCode === null && chrome.signalCode === null) await exited;
    clearTimeout(killer);
    fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  try {
    const port = await waitPortFile(path.join(profile, 'DevToolsActivePort'),
                                    options.startMs || 15000, chrome);
    client = await CDP({ host: '127.0.0.1', port });
  } catch (e) {
    await close();
    e.message += stderr ? `; Chromium said: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : '';
    throw e;
  }
  return { client, close, stderr: () => stderr };
}

module.exports = { launch };
