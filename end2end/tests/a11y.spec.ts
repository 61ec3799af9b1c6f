import { expect, type APIRequestContext } from '@playwright/test';
import { test, axeViolations, hydrated, liveOpened, removeTeam, teamWithIncident, signInPage } from './support';

// Every page passes axe-core with no serious or critical violation, in the dark and the light
// scheme; the incident flow works from the keyboard alone and announces its result.

// axe is injected as a script, which the pages' Content-Security-Policy would refuse.
test.use({ bypassCSP: true });

async function world(request: APIRequestContext) {
  const w = await teamWithIncident(request, 'a11y', 'Access');
  return { team: w.teamId, incident: w.incidentId };
}

for (const scheme of ['dark', 'light'] as const) {
  test(`every page passes axe in the ${scheme} scheme`, async ({ page, request }) => {
    const w = await world(request);
    await page.emulateMedia({ colorScheme: scheme });
    const signedOut = ['/login', '/signup?invite=' + 'x'.repeat(64)];
    const signedIn = [
      '/',
      '/?show=mine&severity=critical&state=triggered',
      `/incidents/${w.incident}`,
      '/schedule',
      '/teams',
      `/teams/${w.team}`,
      `/teams/${w.team}/escalation`,
      `/teams/${w.team}/rota`,
      '/me',
      '/admin',
      '/device',
      '/no-such-page',
    ];
    const report: Record<string, unknown> = {};
    for (const path of signedOut) {
      await page.goto(path);
      await hydrated(page);
      const v = await axeViolations(page);
      if (v.length) report[path] = v;
    }
    await signInPage(page);
    for (const path of signedIn) {
      await page.goto(path);
      await hydrated(page);
      // Sections that load after the page (lists, charts) are part of what is checked.
      await expect(page.locator('.loading')).toHaveCount(0, { timeout: 10_000 });
      const v = await axeViolations(page);
      if (v.length) report[path] = v;
    }
    await removeTeam(request, w.team);
    expect(report).toEqual({});
  });
}

test('the incident flow works from the keyboard and announces what happened', async ({ page, request }) => {
  const w = await world(request);
  // The team goes with its incident even when a step fails: the incident list's tests expect
  // no incident of another test left open.
  try {
    await signInPage(page);
    const live = liveOpened(page);
    await page.goto(`/incidents/${w.incident}`);
    await hydrated(page);
    await live();
    const acknowledge = page.getByRole('button', { name: 'Acknowledge' });
    // Tab from the top of the page until the Acknowledge button has the focus.
    await page.locator('body').focus();
    for (let i = 0; i < 40 && !(await acknowledge.evaluate((b) => b === document.activeElement)); i++) {
      await page.keyboard.press('Tab');
    }
    await expect(acknowledge).toBeFocused();
    // Screen readers read out a live region whose text changes, not one drawn with its text:
    // the region is in the page before the press (marked here) and still the same one after.
    const region = page.locator('[role="status"][aria-live="polite"]');
    await expect(region).toHaveCount(1);
    await region.evaluate((r) => r.setAttribute('data-before-press', ''));
    await page.keyboard.press('Enter');
    await expect(page.locator('.incident-head .state')).toHaveText('acknowledged');
    await expect(region).toHaveText(/acknowledged/i);
    await expect(region).toHaveAttribute('data-before-press', '');
  } finally {
    await removeTeam(request, w.team);
  }
});
