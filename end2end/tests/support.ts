import { test as base, expect, type APIRequestContext, type Page } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { freePort, serveKlaxon, startProvider } from '../instance.mjs';

// Helpers shared by the browser tests (not a test file itself: Playwright runs only *.spec.ts).

/// The Klaxon a worker's tests share, with the identity provider it trusts.
type Instance = { baseURL: string; idpIssuer: string };

/// Playwright's `test` with one Klaxon per worker: the release binary on a free port with a fresh
/// data directory, and the real OpenID Connect provider (oidc/provider.mjs) on another. A test
/// file's tests run in order on one worker, so the files of one worker share that instance's
/// state as they would share one server; ports are free ones, so nothing left running elsewhere
/// can stand in the way.
export const test = base.extend<{ idpIssuer: string }, { instance: Instance }>({
  instance: [
    async ({}, use) => {
      const port = await freePort();
      const baseURL = `http://127.0.0.1:${port}`;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-e2e-idp-'));
      // Its accounts (see oidc/provider.mjs); `sam` is in the `payments-oncall` group.
      const stateFile = path.join(dir, 'oidc-state.json');
      fs.writeFileSync(
        stateFile,
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
      const idp = await startProvider(stateFile, baseURL);
      const klaxon = await serveKlaxon(
        {
          KLAXON_OIDC_ISSUER: idp.issuer,
          KLAXON_OIDC_CLIENT_ID: 'klaxon',
          KLAXON_OIDC_CLIENT_SECRET: 'klaxon-secret',
          KLAXON_OIDC_ALLOWED_GROUPS: 'klaxon',
          KLAXON_OIDC_DISPLAY_NAME: 'Test IdP',
          // The silence test's Alertmanager listens on loopback, which the outbound policy refuses
          // unless allowed, as an administrator would allow an Alertmanager in the same network.
          KLAXON_OUTBOUND_ALLOW: '127.0.0.0/8',
          KLAXON_OUTBOUND_ALLOW_PERSONAL: '127.0.0.0/8',
          // The Slack app whose requests `chat.spec.ts` signs.
          KLAXON_SLACK_SIGNING_SECRET: SLACK_SECRET,
        },
        { port, stdio: ['ignore', 'inherit', 'inherit'] },
      );
      await use({ baseURL, idpIssuer: idp.issuer });
      klaxon.stop();
      idp.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    { scope: 'worker', timeout: 90_000 },
  ],
  baseURL: async ({ instance }, use) => use(instance.baseURL),
  idpIssuer: async ({ instance }, use) => use(instance.idpIssuer),
});

export const PASSWORD = 'correct horse battery';
export const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';

/// Presses Sign in and waits for the page it loads. Signing in loads the next page in full
/// (`account_changes_load_in_full`); until that load the signed-out page, already hydrated, is
/// still there and could be taken for the next one.
export async function pressSignIn(page: Page) {
  const loaded = page.waitForEvent('load');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await loaded;
}

/// A signed-in page's live stream opening (`components::live`). It resumes where the page was
/// rendered, so the page is not loaded again unless something it shows changed meanwhile. Start
/// waiting before the page is opened; await it before typing or moving the focus.
export function liveOpened(page: Page): () => Promise<void> {
  const opened = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/events', { timeout: 20_000 });
  return async () => {
    await opened;
    await page.evaluate(() => new Promise((drawn) => requestAnimationFrame(() => drawn(null))));
  };
}

/// Signs the browser page in as alice through the sign-in form, landing on the incident list.
export async function signInPage(page: Page) {
  await page.goto('/login');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/$/);
}

/// Signs the API context in as alice, creating her first if this is a fresh instance.
export async function signInApi(request: APIRequestContext) {
  const bootstrap = await request.post('/api/bootstrap', {
    data: { username: 'alice', password: PASSWORD },
  });
  expect([201, 409]).toContain(bootstrap.status());
  const login = await request.post('/api/auth/login', {
    data: { username: 'alice', password: PASSWORD },
  });
  expect(login.status()).toBe(200);
}

/// Signs the API context in as alice and makes a team (`{prefix}-{suffix}`) with an integration
/// and one incident, opened by a firing `{alertname}{suffix}` alert that came through the webhook.
export async function teamWithIncident(request: APIRequestContext, prefix: string, alertname: string) {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `${prefix}-${suffix}` } })).json();
  const { key } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
  const name = `${alertname}${suffix}`;
  const hook = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(name, `${suffix}${prefix}`.padEnd(16, '0').slice(0, 16), prefix, `${prefix}-1:9100`, {
      summary: `${alertname} on ${prefix}-1`,
    }),
  });
  expect(hook.status()).toBe(200);
  const [incident] = await (await request.get(`/api/incidents?team_id=${team.id}`)).json();
  return { teamId: team.id as number, key: key as string, alertname: name, incidentId: incident.id as number, suffix };
}

/// Deletes a team a test made, with its incidents, so later tests see the instance as they expect.
export async function removeTeam(request: APIRequestContext, teamId: number) {
  expect((await request.delete(`/api/teams/${teamId}`)).status()).toBe(204);
}

/// Waits until the page's wasm has hydrated it, so client-side controls work.
export async function hydrated(page: Page) {
  await expect(page.locator('[data-hydrated="true"]')).toBeAttached({ timeout: 15_000 });
}

/// An Alertmanager webhook payload (version 4) with one firing alert of `service`.
export function alertmanagerPayload(
  alertname: string,
  fingerprint: string,
  service: string,
  instance: string,
  annotations: Record<string, string>,
) {
  const labels = { alertname, instance, service, severity: 'critical' };
  return {
    receiver: 'pager',
    status: 'firing',
    alerts: [
      {
        status: 'firing',
        labels,
        annotations,
        startsAt: new Date().toISOString(),
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: 'http://127.0.0.1:9090/graph?g0.expr=up',
        fingerprint,
      },
    ],
    groupLabels: { alertname, service },
    commonLabels: labels,
    commonAnnotations: annotations,
    externalURL: 'http://127.0.0.1:9093',
    version: '4',
    groupKey: `{}:{alertname="${alertname}", service="${service}"}`,
    truncatedAlerts: 0,
  };
}

/// The release binary the Playwright config serves, for the terminal commands.
export const klaxonBinary = path.join(
  process.env.CARGO_TARGET_DIR
    ? path.resolve(process.env.CARGO_TARGET_DIR)
    : path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'target'),
  'release',
  'klaxon',
);

/// Starts `klaxon login` as a child process with its own config directory and waits for the
/// link and code it prints. `exited` resolves with its exit code; `output()` is all it printed.
export async function startTerminalLogin(baseURL: string) {
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-cli-'));
  const env = { ...process.env, XDG_CONFIG_HOME: config };
  const login = spawn(klaxonBinary, ['login', '--server', baseURL], { env });
  let out = '';
  login.stdout.on('data', (d) => (out += d.toString()));
  login.stderr.on('data', (d) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => login.on('exit', resolve));
  await expect.poll(() => out, { timeout: 10_000 }).toMatch(/\/device\?code=[A-Z0-9]{4}-[A-Z0-9]{4}/);
  return {
    config,
    env,
    exited,
    output: () => out,
    link: out.match(/http\S+\/device\?code=\S+/)![0],
    code: out.match(/shows the code (\S+)/)![1],
  };
}

const axeSource = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/// The page's serious and critical axe-core violations (the first three nodes of each). axe is
/// injected as a script, which the pages' Content-Security-Policy refuses: the calling file uses
/// `test.use({ bypassCSP: true })`. Colours are read once running transitions end: a scheme
/// switched on a loaded page fades links for 120 ms, and axe reading mid-fade finds a contrast
/// the page never settles on. An endless animation is not waited for: it never finishes.
export async function axeViolations(page: Page) {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getComputedTiming().endTime !== Infinity)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
  await page.addScriptTag({ path: axeSource });
  const found = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')),
    }));
  });
  return found.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
}
