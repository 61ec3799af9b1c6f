import { expect } from '@playwright/test';
import { test, PASSWORD, removeTeam, teamWithIncident } from './support';

// Before the wasm arrives, or without JavaScript at all, the incident's forms still work: each
// posts to its server function and the answer is the incident page, updated.

test.use({ javaScriptEnabled: false });

test('acknowledge, snooze, note and resolve work with JavaScript turned off', async ({ page, request }) => {
  const { teamId, incidentId, suffix } = await teamWithIncident(request, 'nojs', 'NoScript');

  await page.goto(`/incidents/${incidentId}`);
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Back at the deep link, through sign-in.
  await expect(page).toHaveURL(new RegExp(`/incidents/${incidentId}$`));
  expect(await page.locator('[data-hydrated="true"]').count()).toBe(0);
  const state = page.locator('.incident-head .state');
  await expect(state).toHaveText('triggered');

  await page.getByRole('button', { name: 'Acknowledge' }).click();
  // The server function answers a plain form post with a redirect back to the page.
  await expect(page).toHaveURL(new RegExp(`/incidents/${incidentId}\\??$`));
  await expect(state).toHaveText('acknowledged');

  await page.getByText('Snooze', { exact: true }).click();
  await page.getByRole('button', { name: 'Snooze for 1 hour' }).click();
  await expect(page.locator('.incident-head')).toContainText(/snoozed/i);

  await page.getByText('Add a note').click();
  await page.getByLabel('Note', { exact: true }).fill(`drained the queue ${suffix}`);
  await page.getByRole('button', { name: 'Add note' }).click();
  await expect(page.locator('.notes')).toContainText(`drained the queue ${suffix}`);

  await page.getByText('Resolve', { exact: true }).click();
  await page.getByLabel('What fixed it?', { exact: true }).fill('Restarted the consumer.');
  await page.getByRole('button', { name: 'Resolve incident' }).click();
  await expect(state).toHaveText('resolved');
  const stored = await (await request.get(`/api/incidents/${incidentId}`)).json();
  expect(stored.state).toBe('resolved');
  expect(stored.notes.map((n: any) => n.text)).toContain(`drained the queue ${suffix}`);
  await removeTeam(request, teamId);
});
