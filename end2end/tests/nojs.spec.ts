import { test, expect } from '@playwright/test';
import { PASSWORD, alertmanagerPayload, removeTeam, signInApi } from './support';

// Before the wasm arrives, or without JavaScript at all, the incident's forms still work: each
// posts to its server function and the answer is the incident page, updated.

test.use({ javaScriptEnabled: false });

test('acknowledge, snooze, note and resolve work with JavaScript turned off', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `nojs-${suffix}` } })).json();
  const { key } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
  const alertname = `NoScript${suffix}`;
  const hook = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(alertname, `${suffix}ee`.padEnd(16, '2'), 'batch', 'batch-1:9100', { summary: 'Queue stuck' }),
  });
  expect(hook.status()).toBe(200);
  const [incident] = await (await request.get(`/api/incidents?team_id=${team.id}`)).json();

  await page.goto(`/incidents/${incident.id}`);
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Back at the deep link, through sign-in.
  await expect(page).toHaveURL(new RegExp(`/incidents/${incident.id}$`));
  expect(await page.locator('[data-hydrated="true"]').count()).toBe(0);
  const state = page.locator('.incident-head .state');
  await expect(state).toHaveText('triggered');

  await page.getByRole('button', { name: 'Acknowledge' }).click();
  // The server function answers a plain form post with a redirect back to the page.
  await expect(page).toHaveURL(new RegExp(`/incidents/${incident.id}\\??$`));
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
  const stored = await (await request.get(`/api/incidents/${incident.id}`)).json();
  expect(stored.state).toBe('resolved');
  expect(stored.notes.map((n: any) => n.text)).toContain(`drained the queue ${suffix}`);
  await removeTeam(request, team.id);
});
