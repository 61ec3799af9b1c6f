import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Helpers shared by the browser tests (not a test file itself: Playwright runs only *.spec.ts).

export const PASSWORD = 'correct horse battery';

/// Signs the browser page in as alice through the sign-in form, landing on the incident list.
export async function signInPage(page: Page) {
  await page.goto('/login');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
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
