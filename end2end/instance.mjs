// A throwaway Klaxon for the scripts beside this file (perf.mjs, screenshots.mjs): the release
// binary on a free port and a fresh data directory, an administrator signed in, and a team with
// incidents that came in through the real webhook.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
export const binary = path.join(targetDir, 'release', 'klaxon');

/// A free port on 127.0.0.1 (the kernel's pick, released at once for the caller to take).
export async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/// The release binary serving on `port` (a free one if not given) from a fresh data directory,
/// with only the `KLAXON_*` settings in `env`. Resolves once `/healthz` answers; `stop()` ends it
/// and removes the directory.
export async function serveKlaxon(env = {}, { port, log = 'warn', stdio = 'inherit' } = {}) {
  port = port || (await freePort());
  const base = `http://127.0.0.1:${port}`;
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-script-'));
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KLAXON_')));
  const server = spawn(binary, ['serve'], {
    env: { ...inherited, ...env, KLAXON_ADDR: `127.0.0.1:${port}`, KLAXON_PUBLIC_URL: base, KLAXON_DATA_DIR: data, KLAXON_LOG: log },
    cwd: data,
    stdio,
  });
  let exited = null;
  server.on('exit', (code, signal) => (exited = signal || code));
  const stop = () => {
    server.kill();
    fs.rmSync(data, { recursive: true, force: true });
  };
  process.on('exit', stop);
  for (let i = 0; i < 600 && exited === null; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, data, stop };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  stop();
  throw new Error(`klaxon serve on ${base} ${exited === null ? 'did not answer /healthz in 60 s' : `exited (${exited})`}`);
}

/// The OpenID Connect provider of oidc/provider.mjs on a free port, for a Klaxon at `redirectBase`;
/// its accounts are read from `stateFile` at every sign-in. Resolves with its issuer once it listens.
export async function startProvider(stateFile, redirectBase) {
  const provider = spawn(process.execPath, [path.join(root, 'end2end', 'oidc', 'provider.mjs')], {
    env: { ...process.env, OIDC_PORT: '0', OIDC_STATE_FILE: stateFile, OIDC_REDIRECT_URIS: `${redirectBase}/api/oidc/callback` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = ''; // its warnings (Node.js version, development adapter) are said only if it fails
  provider.stderr.on('data', (d) => (said += d.toString()));
  const stop = () => provider.kill();
  process.on('exit', stop);
  const issuer = await new Promise((resolve, reject) => {
    let out = '';
    provider.stdout.on('data', (d) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line).issuer);
    });
    provider.on('exit', (code) => reject(new Error(`oidc/provider.mjs exited (${code}) before it listened:\n${said}`)));
  });
  return { issuer, stop };
}

/// `env`: more `KLAXON_*` settings for this instance (an ntfy server, say). An administrator
/// (`maria`) is signed in through `api`.
export async function startKlaxon(env = {}) {
  const { base, stop } = await serveKlaxon(env);
  let cookie = '';
  const api = async (method, p, body) =>
    fetch(base + p, {
      method,
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: body && JSON.stringify(body),
    });
  await api('POST', '/api/bootstrap', { username: 'maria', password: 'a long enough password' });
  const login = await api('POST', '/api/auth/login', { username: 'maria', password: 'a long enough password' });
  cookie = login.headers.get('set-cookie').split(';')[0];
  return { base, api, stop, cookie: () => cookie };
}

/// A team with an integration and `alerts` firing alerts, each its own incident.
export async function seed(k, alerts) {
  const team = await (await k.api('POST', '/api/teams', { name: 'payments', display_name: 'Payments' })).json();
  const { key } = await (await k.api('POST', `/api/teams/${team.id}/integrations`, { name: 'prometheus' })).json();
  for (const a of alerts) {
    const labels = { alertname: a.alertname, service: a.service, instance: a.instance, severity: a.severity };
    const r = await k.api('POST', `/api/alertmanager/webhook/${key}`, {
      version: '4', status: 'firing', receiver: 'klaxon', groupKey: `{}:{alertname="${a.alertname}"}`, truncatedAlerts: 0,
      groupLabels: { alertname: a.alertname }, commonLabels: labels, commonAnnotations: {}, externalURL: 'http://alertmanager:9093',
      alerts: [{ status: 'firing', labels, annotations: { summary: a.summary },
        startsAt: new Date(Date.now() - (a.minutesAgo || 0) * 60_000).toISOString(), endsAt: '0001-01-01T00:00:00Z',
        generatorURL: 'http://prometheus:9090/graph', fingerprint: a.alertname.toLowerCase().padEnd(16, '0').slice(0, 16) }],
    });
    if (!r.ok) throw new Error(`webhook answered ${r.status}`);
  }
  return team.id;
}

/// A Chromium browser context at the phone size, signed in as the instance's administrator.
export async function phone(browser, k, options = {}) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, ...options });
  const [name, ...value] = k.cookie().split('=');
  await context.addCookies([{ name, value: value.join('='), url: k.base }]);
  return context;
}
