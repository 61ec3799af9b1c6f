import { expect, type Page } from '@playwright/test';
import { test, hydrated, removeTeam, teamWithIncident, signInPage } from './support';

// Controls never vanish: Acknowledge pressed while the connection is down says it failed and
// leaves the action bar and the cards where they were; when the connection returns the page asks
// again by itself, and Acknowledge works, without a reload.

test('the controls stay through a dropped connection and work when it returns', async ({ page, request, context }) => {
  const w = await teamWithIncident(request, 'flaky', 'Flaky');
  await signInPage(page);
  await page.goto(`/incidents/${w.incidentId}`);
  await hydrated(page);
  await expect(page.getByText('Live', { exact: true })).toBeVisible({ timeout: 15_000 });
  const acknowledge = page.getByRole('button', { name: 'Acknowledge' });
  const cards = ['Snooze', 'Assign', 'Add a note', 'Silence in Alertmanager'];

  await context.setOffline(true);
  await acknowledge.click();
  await expect(page.getByRole('alert').filter({ hasText: 'could not be reached' }).first()).toBeVisible();
  // Nothing went: the bar and every card are still there.
  await expect(acknowledge).toBeVisible();
  await expect(acknowledge).toBeInViewport();
  const card = (name: string) => page.locator('.controls summary').filter({ hasText: new RegExp(`^${name}$`) });
  for (const name of cards) await expect(card(name)).toBeVisible();
  await expect(page.locator('.stale')).toContainText('Klaxon keeps trying');
  // It keeps trying: the page asks again while it is offline...
  const asked: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/rpc/')) asked.push(r.url());
  });
  await expect.poll(() => asked.length, { timeout: 10_000 }).toBeGreaterThan(0);

  // ...and recovers by itself when the connection returns, without a reload.
  const navigations: string[] = [];
  page.on('framenavigated', (f) => navigations.push(f.url()));
  await context.setOffline(false);
  await expect(page.getByText('Live', { exact: true })).toBeVisible({ timeout: 15_000 });
  await expect(page.locator('.stale')).toBeHidden();
  for (const name of cards) await expect(card(name)).toBeVisible();
  await acknowledge.click();
  await expect(page.locator('.incident-head .state')).toHaveText('acknowledged');
  expect(navigations).toEqual([]);
  const stored = await (await request.get(`/api/incidents/${w.incidentId}`)).json();
  expect(stored.state).toBe('acknowledged');
  await removeTeam(request, w.teamId);
});

test('a first load that fails says so with a way to try again, never an empty place', async ({ page, request, context }) => {
  const w = await teamWithIncident(request, 'cut', 'Cut');
  // The team goes with its incident even when a step fails (the list's tests expect none left open).
  try {
    await signInPage(page);
    await page.goto('/me');
    await hydrated(page);
    // Into the list inside the app with the connection down: its read fails.
    await context.setOffline(true);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).click();
    const failed = page.locator('section[aria-labelledby="incidents-title"] .failed');
    await expect(failed.getByRole('alert')).toContainText('could not be reached');
    await expect(failed.getByRole('button', { name: 'Try again' })).toBeVisible();
    await context.setOffline(false);
    // Back online, the page also tries again by itself as its live stream reopens, and may have
    // the list before the button is pressed: either way the list comes back.
    await failed
      .getByRole('button', { name: 'Try again' })
      .click({ timeout: 3_000 })
      .catch(() => {});
    await expect(page.getByRole('link', { name: new RegExp(w.alertname) })).toBeVisible();

    // The team page's sections, each read on its own: shown once (its code is then in memory),
    // left, and come back to with the connection down.
    await page.goto(`/teams/${w.teamId}`);
    await hydrated(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Me' }).click();
    await expect(page).toHaveURL(/\/me$/);
    await expect(page.getByRole('heading', { name: /alice/ })).toBeVisible();
    await context.setOffline(true);
    await page.goBack();
    await expect(page).toHaveURL(new RegExp(`/teams/${w.teamId}$`));
    const sentences = page.locator('.failed [role="alert"]');
    await expect.poll(() => sentences.count()).toBeGreaterThan(3);
    for (const s of await sentences.all()) await expect(s).toContainText('could not be reached');
    expect(await page.locator('.failed').count()).toBe(await page.locator('.failed').filter({ hasText: 'Try again' }).count());
    await context.setOffline(false);
  } finally {
    await removeTeam(request, w.teamId);
  }
});
