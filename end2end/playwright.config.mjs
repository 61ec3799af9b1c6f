// Browser tests against the release binary, which Playwright starts itself on a fresh data directory.
// Build it first (scripts/test.sh does): Chromium comes from Debian, not from Playwright's download.
import { defineConfig } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const targetDir = process.env.CARGO_TARGET_DIR
  ? path.resolve(process.env.CARGO_TARGET_DIR)
  : path.join(here, '..', 'target');
const binary = path.join(targetDir, 'release', 'klaxon');
const addr = '127.0.0.1:18080';
const baseURL = `http://${addr}`;

// Workers load this file too: they inherit the directory made by the main process instead of making one.
if (!process.env.KLAXON_E2E_DATA_DIR) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-e2e-'));
  process.env.KLAXON_E2E_DATA_DIR = dir;
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}
const dataDir = process.env.KLAXON_E2E_DATA_DIR;

// The real OpenID Connect provider (oidc-provider) the single sign-on test signs in through.
// Its accounts are in a file (see oidc/provider.mjs); `sam` is in the `payments-oncall` group.
const idpPort = 18081;
const idpIssuer = `http://127.0.0.1:${idpPort}`;
const idpState = path.join(dataDir, 'oidc-state.json');
fs.writeFileSync(
  idpState,
  JSON.stringify({
    accounts: {
      sam: {
        email: 'sam@example.com',
        email_verified: true,
        preferred_username: 'sam',
        groups: ['klaxon', 'payments-oncall'],
      },
    },
  }),
);

// The server gets only the settings below, whatever KLAXON_* variables the caller has set.
const serverEnv = Object.fromEntries(
  Object.keys(process.env).filter((k) => k.startsWith('KLAXON_')).map((k) => [k, undefined]),
);
Object.assign(serverEnv, {
  KLAXON_ADDR: addr,
  KLAXON_DATA_DIR: dataDir,
  KLAXON_PUBLIC_URL: baseURL,
  KLAXON_OIDC_ISSUER: idpIssuer,
  KLAXON_OIDC_CLIENT_ID: 'klaxon',
  KLAXON_OIDC_CLIENT_SECRET: 'klaxon-secret',
  KLAXON_OIDC_ALLOWED_GROUPS: 'klaxon',
  KLAXON_OIDC_DISPLAY_NAME: 'Test IdP',
  // The silence test's Alertmanager listens on loopback, which the outbound policy refuses unless
  // allowed, as an administrator would allow an Alertmanager in the same network.
  KLAXON_OUTBOUND_ALLOW: '127.0.0.0/8',
  KLAXON_OUTBOUND_ALLOW_PERSONAL: '127.0.0.0/8',
});

export default defineConfig({
  testDir: 'tests',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 30_000,
  reporter: [['list']],
  use: { baseURL, trace: 'retain-on-failure' },
  projects: [
    {
      name: 'chromium-mobile',
      use: {
        browserName: 'chromium',
        viewport: { width: 390, height: 844 },
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        },
      },
    },
  ],
  webServer: [
    {
      command: 'node oidc/provider.mjs',
      cwd: here,
      env: {
        OIDC_PORT: String(idpPort),
        OIDC_STATE_FILE: idpState,
        OIDC_REDIRECT_URIS: `${baseURL}/api/oidc/callback`,
      },
      url: `${idpIssuer}/.well-known/openid-configuration`,
      reuseExistingServer: false,
      timeout: 30_000,
    },
    {
      command: `"${binary}" serve`,
      cwd: dataDir,
      env: serverEnv,
      url: `${baseURL}/healthz`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
  ],
});
