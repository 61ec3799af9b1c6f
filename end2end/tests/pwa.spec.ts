import { test, expect, chromium } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PASSWORD, hydrated, removeTeam, teamWithIncident } from './support';

// Installable and usable offline: Chromium finds nothing missing to install the app; the service
// worker keeps the pages last seen and the app's code, so the app opens offline saying so, and an
// action tried offline is refused with a sentence instead of being queued.

test('installable, opens offline with what was last seen, refuses actions offline', async ({ request, baseURL }) => {
  const { teamId, alertname } = await teamWithIncident(request, 'pwa', 'Offline');

  // A profile of its own: Chromium never offers to install from an incognito window, which is
  // what Playwright's ordinary contexts are.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-pwa-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
    viewport: { width: 390, height: 844 },
    baseURL,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto('/login');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);

  // The manifest and the service worker are what Chromium asks for.
  const cdp = await context.newCDPSession(page);
  await expect
    .poll(async () => (await cdp.send('Page.getInstallabilityErrors')).installabilityErrors, { timeout: 15_000 })
    .toEqual([]);
  const manifest = await cdp.send('Page.getAppManifest');
  expect(JSON.parse(manifest.data!).start_url).toBe('/');
  await expect.poll(() => page.evaluate(async () => !!(await navigator.serviceWorker.ready).active)).toBe(true);

  // Loaded once under the worker, the list and the incident are kept.
  const clock = () =>
    page.evaluate(() => {
      const d = new Date();
      return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    });
  const before = await clock();
  await page.reload();
  const row = page.getByRole('link', { name: new RegExp(alertname) });
  await expect(row).toBeVisible();
  const incidentPath = (await row.getAttribute('href'))!;
  // With the build's main wasm the worker keeps every page's code too, so a page opened later,
  // from a push say, takes its code from the phone.
  const keptChunks = () =>
    page.evaluate(async () =>
      (await (await caches.open('klaxon-files-v1')).keys()).map((r) => new URL(r.url).pathname.split('/').pop()!),
    );
  await expect.poll(async () => (await keptChunks()).filter((f) => /^split_\w+_chunk_\d+\.wasm$/.test(f)).sort(), { timeout: 15_000 })
    .toEqual([expect.stringMatching(/^split_incident_chunk_/), expect.stringMatching(/^split_other_chunk_/), expect.stringMatching(/^split_signed_out_chunk_/)]);
  await page.goto(incidentPath);
  await expect(page.getByRole('button', { name: 'Acknowledge' })).toBeVisible();
  const after = await clock();

  await context.setOffline(true);
  await page.goto('/');
  const banner = page.getByRole('alert').filter({ hasText: 'Offline, showing what you saw at' });
  await expect(banner).toBeVisible();
  expect([before, after]).toContain((await banner.textContent())!.match(/at (\d\d:\d\d)/)![1]);
  await expect(page.getByRole('link', { name: new RegExp(alertname) })).toBeVisible();
  // A page never seen opens the list, also saying so.
  await page.goto('/schedule');
  await expect(banner).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(alertname) })).toBeVisible();

  // An action tried offline: a sentence, and nothing was done.
  await page.goto(incidentPath);
  await expect(banner).toBeVisible();
  await page.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(page.getByRole('alert')).toContainText('Klaxon did not receive this and nothing was changed');
  await context.setOffline(false);
  const [incident] = await (await request.get(`/api/incidents?team_id=${teamId}`)).json();
  expect(incident.state).toBe('triggered');
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  await removeTeam(request, teamId);
});
