import { expect, type Page } from '@playwright/test';
import { test, axeViolations, hydrated, removeTeam, teamWithIncident, signInPage } from './support';

// The three reports at 390 px: on-call health and alert noise from the team page, and a resolved
// incident's review with a follow-up item added, listed on the team page, then ticked off; each
// page fits the phone's width and passes axe in both schemes.

test.use({ bypassCSP: true });

async function checked(page: Page) {
  await expect(page.locator('.loading')).toHaveCount(0, { timeout: 10_000 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  for (const scheme of ['dark', 'light'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    expect(await axeViolations(page), scheme).toEqual([]);
  }
}

test('the reports and a review work at 390 px', async ({ page, request }) => {
  // A replica reads reports for at most a tenth of its time (core::reports::turns), and this walk
  // reads a dozen: alone it takes seconds, but on a busy machine it can run past 30 s.
  test.setTimeout(60_000);
  const w = await teamWithIncident(request, 'reports', 'DiskFull');
  try {
    expect((await request.post(`/api/incidents/${w.incidentId}/acknowledge`, { data: {} })).status()).toBe(200);
    const resolved = await request.post(`/api/incidents/${w.incidentId}/resolve`, {
      data: { resolution: 'Grew the volume by 20 GB' },
    });
    expect(resolved.status()).toBe(200);
    await signInPage(page);

    // From the team page to its reports.
    await page.goto(`/teams/${w.teamId}`);
    await hydrated(page);
    await page.getByRole('link', { name: /Reports/ }).click();
    await expect(page).toHaveURL(new RegExp(`/teams/${w.teamId}/reports$`));
    await expect(page.getByRole('heading', { name: 'On-call health' })).toBeVisible();
    const health = page.locator('section', { has: page.getByRole('heading', { name: 'On-call health' }) });
    await expect(health.locator('.facts').first()).toContainText('Incidents1');
    const noise = page.locator('.noisy', { hasText: w.alertname });
    await expect(noise).toContainText('1 incident');
    await expect(noise.getByRole('link')).toHaveAttribute('href', new RegExp(`/incidents/${w.incidentId}#silence$`));
    await page.getByRole('link', { name: '13 weeks' }).click();
    await expect(page).toHaveURL(/weeks=13$/);
    await expect(page.getByRole('link', { name: '13 weeks' })).toHaveAttribute('aria-current', 'page');
    await checked(page);

    // The incident leads to its review; a follow-up item is added there.
    await page.goto(`/incidents/${w.incidentId}`);
    await hydrated(page);
    await page.getByRole('link', { name: /Review it/ }).click();
    await expect(page.getByRole('heading', { name: `Review of #${w.incidentId}` })).toBeVisible();
    await expect(page.locator('.facts')).toContainText('by alice');
    await expect(page.locator('.facts')).toContainText('Grew the volume by 20 GB');
    await hydrated(page);
    await page.getByLabel('What should be done so it does not happen again?').fill('Alert at 80% full');
    await page.getByLabel('Who will do it').selectOption({ label: 'alice' });
    await page.getByRole('button', { name: 'Add the item' }).click();
    const item = page.locator('.follow-ups li', { hasText: 'Alert at 80% full' });
    await expect(item).toContainText('to do · alice');
    await expect(page.getByLabel('What should be done so it does not happen again?')).toHaveValue('');
    await checked(page);
    const markdown = await request.get(`/api/incidents/${w.incidentId}/review?format=markdown`);
    expect(await markdown.text()).toContain('- [ ] Alert at 80% full (alice)');

    // The team page lists it until it is done.
    await page.goto(`/teams/${w.teamId}`);
    await hydrated(page);
    const todo = page.getByRole('link', { name: /Alert at 80% full/ });
    await expect(todo).toBeVisible();
    await todo.click();
    await hydrated(page);
    await page.locator('.follow-ups li', { hasText: 'Alert at 80% full' }).getByRole('button', { name: 'Mark done' }).click();
    await expect(page.locator('.follow-ups li', { hasText: 'Alert at 80% full' })).toContainText('done · alice');
    await page.goto(`/teams/${w.teamId}`);
    await hydrated(page);
    await expect(page.getByText('None: each incident\'s review can add some.')).toBeVisible();
  } finally {
    await removeTeam(request, w.teamId);
  }
});
