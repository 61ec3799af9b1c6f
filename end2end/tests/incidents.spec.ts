import { expect } from '@playwright/test';
import { test, PASSWORD, alertmanagerPayload, hydrated, signInApi, pressSignIn } from './support';

// From alert to resolved incident on the phone: an Alertmanager webhook opens an incident, which is
// acknowledged, annotated and resolved from its page; then a team owner adds an integration (its URL is
// shown once) and takes today's on-call shift.

test('an alert is acknowledged, noted and resolved from the phone', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const displayName = `Orders ${suffix}`;
  const team = await request.post('/api/teams', {
    data: { name: `orders-${suffix}`, display_name: displayName },
  });
  expect(team.status()).toBe(201);
  const teamId = (await team.json()).id;
  const integration = await request.post(`/api/teams/${teamId}/integrations`, {
    data: { name: 'prometheus', kind: 'alertmanager' },
  });
  expect(integration.status()).toBe(201);
  const { key } = await integration.json();

  const alertname = `DiskFull${suffix}`;
  const fingerprint = `${suffix}${Math.random().toString(16).slice(2)}`.slice(0, 16);
  const hook = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(alertname, fingerprint, 'orders-db', 'db-1:9100', {
      summary: 'Disk almost full on db-1',
      runbook_url: 'https://runbooks.example/disk',
    }),
  });
  expect(hook.status()).toBe(200);

  // Signed out, the incident list goes through sign-in.
  await page.goto('/');
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/$/);

  // The list shows severity and state in words, the team and the age.
  const row = page.getByRole('link', { name: new RegExp(alertname) });
  await expect(row).toBeVisible();
  await expect(row).toContainText('critical');
  await expect(row).toContainText('triggered');
  await expect(row).toContainText(displayName);
  await expect(page.getByText('Live', { exact: true })).toBeVisible({ timeout: 15_000 });

  await row.click();
  await expect(page).toHaveURL(/\/incidents\/\d+$/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText(alertname);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Disk almost full on db-1');
  await expect(page.getByRole('definition').filter({ hasText: 'orders-db' })).toBeVisible();
  await hydrated(page);

  const state = page.locator('.incident-head .state');
  await expect(state).toHaveText('triggered');
  const acknowledge = page.getByRole('button', { name: 'Acknowledge' });
  await expect(acknowledge).toBeInViewport();
  await acknowledge.click();
  await expect(state).toHaveText('acknowledged');
  await expect(acknowledge).toBeHidden();
  await expect(page.locator('.timeline')).toContainText('acknowledged');

  await page.getByText('Add a note').click();
  await page.getByLabel('Note', { exact: true }).fill('Disk at 97% on db-1; removing old WAL files.');
  await page.getByRole('button', { name: 'Add note' }).click();
  await expect(page.locator('.notes')).toContainText('removing old WAL files');

  await page.getByText('Resolve', { exact: true }).click();
  await page.getByLabel('What fixed it?', { exact: true }).fill('Removed old WAL files and fixed the archiver.');
  await page.getByRole('button', { name: 'Resolve incident' }).click();
  await expect(state).toHaveText('resolved');
  await expect(page.getByRole('region', { name: 'Actions', exact: true })).toBeHidden();
  await expect(page.locator('.notes')).toContainText('fixed the archiver');

  // Back on the list it is among the recently resolved.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).click();
  const resolved = page.getByRole('list', { name: 'Recently resolved' });
  await expect(resolved.getByRole('link', { name: new RegExp(alertname) })).toContainText('resolved');

  // A new integration's webhook URL is shown once.
  await page.goto(`/teams/${teamId}`);
  await hydrated(page);
  await expect(page.getByText('prometheus', { exact: true })).toBeVisible();
  await page.getByText('Add an integration').click();
  await page.getByLabel('Integration name').fill('staging');
  await page.getByRole('button', { name: 'Create integration' }).click();
  const url = page.getByLabel('Webhook URL of “staging”');
  await expect(url).toHaveValue(/\/api\/alertmanager\/webhook\/.{20,}$/);
  const raw = await url.inputValue();
  await expect(page.getByText('it will not be shown again')).toBeVisible();
  // The Alertmanager snippet is one tap from the clipboard.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  const copy = page.getByRole('button', { name: 'Copy the Alertmanager snippet' });
  await copy.click();
  await expect(copy).toHaveText('Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain(`webhook_configs:\n      - url: ${raw}\n        send_resolved: true`);
  await expect(page.getByText('staging', { exact: true })).toBeVisible();
  await page.reload();
  await expect(page.getByText('staging', { exact: true })).toBeVisible();
  await expect(page.getByLabel('Webhook URL of “staging”')).toHaveCount(0);
  expect(await page.content()).not.toContain(raw);

  // Today's shift, given on the team page, shows on the calendar and on the schedule page.
  const today = new Date().toISOString().slice(0, 10);
  await page.getByText('Give someone days').click();
  await page.getByLabel('Member', { exact: true }).selectOption({ label: 'alice' });
  await page.getByLabel('First day').fill(today);
  await page.getByRole('button', { name: 'Give days' }).click();
  await expect(page.locator('.calendar td.today')).toContainText('alice');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedule' }).click();
  await expect(page).toHaveURL(/\/schedule$/);
  const onCallToday = page.getByRole('region', { name: 'On call today' });
  await expect(onCallToday.getByRole('link', { name: new RegExp(displayName) })).toContainText('alice (you)');
});
