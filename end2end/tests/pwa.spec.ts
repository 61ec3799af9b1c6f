import { expect, chromium } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, PASSWORD, hydrated, removeTeam, teamWithIncident, pressSignIn } from './support';

// Installable and usable offline: Chromium finds nothing missing to install the app; the service
// worker keeps the pages last seen and the app's code, so the app opens offline saying so, and an
// action tried offline is refused with a sentence instead of being queued.

/// A phone of its own: a Chromium profile, since Chromium never offers to install from an incognito
/// window, which is what Playwright's ordinary contexts are.
async function phone(baseURL: string) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-pwa-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
    viewport: { width: 390, height: 844 },
    baseURL,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { profile, context, page };
}

test('installable, opens offline with what was last seen, refuses actions offline', async ({ request, baseURL }) => {
  const { teamId, alertname } = await teamWithIncident(request, 'pwa', 'Offline');

  const { profile, context, page } = await phone(baseURL!);
  await page.goto('/login');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
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
  // So is the stylesheet: a page the worker asks for links it, and does not carry its own copy.
  const style = () =>
    page.evaluate(() => ({
      inline: document.querySelectorAll('style').length,
      linked: [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => new URL((l as HTMLLinkElement).href).pathname),
      background: getComputedStyle(document.body).backgroundColor,
    }));
  const looks = { inline: 0, linked: [expect.stringMatching(/^\/pkg\/[0-9a-f]{16}\/klaxon\.css$/)], background: 'rgb(244, 245, 247)' };
  await page.goto(incidentPath);
  await expect(page.getByRole('button', { name: 'Acknowledge' })).toBeVisible();
  expect(await style()).toEqual(looks);
  const after = await clock();

  await context.setOffline(true);
  await page.goto('/');
  const banner = page.getByRole('alert').filter({ hasText: 'Offline, showing what you saw at' });
  await expect(banner).toBeVisible();
  expect([before, after]).toContain((await banner.textContent())!.match(/at (\d\d:\d\d)/)![1]);
  await expect(page.getByRole('link', { name: new RegExp(alertname) })).toBeVisible();
  // A page never seen leads to the list under the list's own address, saying the page asked
  // for is not kept on this phone.
  await page.goto('/schedule');
  await expect(page).toHaveURL(/\/\?not-kept=%2Fschedule$/);
  await expect(banner).toContainText('/schedule is not available offline');
  await expect(page.getByRole('link', { name: new RegExp(alertname) })).toBeVisible();

  // An action tried offline: a sentence, and nothing was done.
  await page.goto(incidentPath);
  await expect(banner).toBeVisible();
  // The kept copy looks as it did: its stylesheet comes from the phone.
  expect(await style()).toEqual(looks);
  await page.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(page.getByRole('alert')).toContainText('Klaxon did not receive this and nothing was changed');
  await context.setOffline(false);
  const [incident] = await (await request.get(`/api/incidents?team_id=${teamId}`)).json();
  expect(incident.state).toBe('triggered');
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  await removeTeam(request, teamId);
});

// Kept pages belong to the account that saw them: signing out in the app and another person
// signing in on the same phone never shows the first person's pages offline.
test('pages kept offline are the signed-in account\'s only', async ({ request, baseURL }) => {
  const { teamId, alertname } = await teamWithIncident(request, 'kept', 'AlicesOwn');
  const dave = `dave-${Date.now().toString(36)}`;
  expect((await request.post('/api/users', { data: { username: dave, password: PASSWORD } })).status()).toBe(201);
  const { profile, context, page } = await phone(baseURL!);
  try {
    const signIn = async (username: string) => {
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await pressSignIn(page);
      await expect(page).toHaveURL(/\/$/);
      await hydrated(page);
    };
    await page.goto('/login');
    await signIn('alice');
    await expect.poll(() => page.evaluate(async () => !!(await navigator.serviceWorker.ready).active)).toBe(true);
    // Loaded under the worker, alice's list is kept.
    await page.reload();
    await expect(page.getByRole('link', { name: new RegExp(alertname) })).toBeVisible();
    await expect
      .poll(() => page.evaluate(async () => (await (await caches.open('klaxon-pages-v1')).keys()).length))
      .toBeGreaterThan(0);

    // Alice signs out in the app, dave signs in in the app: no page is typed into the address bar.
    await page.goto('/me');
    await hydrated(page);
    const signOut = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/rpc/logout'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await (await signOut).allHeaders())['clear-site-data']).toBe('"cache"');
    await expect(page).toHaveURL(/\/login/);
    await hydrated(page);
    await signIn(dave);

    // Offline, dave sees nothing of alice's.
    await context.setOffline(true);
    await page.goto('/');
    // Dave's own copy under the offline banner, or the offline page: either says it is offline.
    await expect(page.getByRole('alert').first()).toContainText(/[Oo]ffline/);
    await expect(page.getByText(new RegExp(alertname))).toHaveCount(0);
    await expect(page.getByText('alice', { exact: true })).toHaveCount(0);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    await removeTeam(request, teamId);
  }
});
