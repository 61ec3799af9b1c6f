import { expect } from '@playwright/test';
import { test, hydrated, signInApi, signInPage, removeTeam } from './support';

// A team moving its senders from PagerDuty or Opsgenie: the owner adds an integration of that kind
// on the team page, gets its key once with the Alertmanager recipe, and a sender using that key
// against Klaxon's PagerDuty- or Opsgenie-compatible API opens an incident.

test('a PagerDuty and an Opsgenie sender move by their URL and key', async ({ page, request, baseURL }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `senders-${suffix}` } })).json();
  await signInPage(page);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);

  const add = async (name: string, kind: string, keyLabel: string) => {
    await page.goto(`/teams/${team.id}`);
    await hydrated(page);
    await page.getByText('Add an integration').click();
    await page.getByLabel('Integration name').fill(name);
    await page.getByLabel('Sent by').selectOption({ label: kind });
    await page.getByRole('button', { name: 'Create integration' }).click();
    const key = page.getByLabel(`${keyLabel} of “${name}”`);
    await expect(key).toHaveValue(/^.{20,}$/);
    const copy = page.getByRole('button', { name: 'Copy the Alertmanager snippet' });
    await copy.click();
    await expect(copy).toHaveText('Copied');
    return {
      key: await key.inputValue(),
      snippet: await page.evaluate(() => navigator.clipboard.readText()),
    };
  };

  // PagerDuty: the routing key and the Events API URL.
  const pd = await add('uptime', 'PagerDuty Events v2', 'Routing key');
  expect(pd.snippet).toContain(`pagerduty_configs:\n      - url: ${baseURL}/v2/enqueue\n        routing_key: ${pd.key}`);
  // The deploy before it, reported as a change event, is shown with the incident.
  const change = await request.post('/v2/change/enqueue', {
    data: {
      routing_key: pd.key,
      payload: { summary: `Deployed checkout ${suffix}`, source: 'ci' },
      links: [{ href: 'https://ci.example/builds/7', text: 'Build 7' }],
    },
  });
  expect(change.status()).toBe(202);
  const event = await request.post('/v2/enqueue', {
    data: {
      routing_key: pd.key,
      event_action: 'trigger',
      dedup_key: `disk-${suffix}`,
      payload: { summary: `Disk full ${suffix}`, source: 'db-1', severity: 'critical' },
    },
  });
  expect(event.status()).toBe(202);

  // Opsgenie: the API key and the API URL the sender adds v2/alerts to.
  const og = await add('zabbix', 'Opsgenie Alert API', 'API key');
  expect(og.snippet).toContain(`opsgenie_configs:\n      - api_url: ${baseURL}/\n        api_key: ${og.key}`);
  const alert = await request.post('/v2/alerts', {
    headers: { authorization: `GenieKey ${og.key}` },
    data: { message: `Backup failed ${suffix}`, alias: `backup-${suffix}`, priority: 'P2' },
  });
  expect(alert.status()).toBe(202);

  // Both are incidents on the phone.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).click();
  await expect(page.getByRole('link', { name: new RegExp(`Disk full ${suffix}`) })).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(`Backup failed ${suffix}`) })).toBeVisible();
  await page.getByRole('link', { name: new RegExp(`Disk full ${suffix}`) }).click();
  const changes = page.getByRole('region', { name: 'Changes before it began' });
  await expect(changes).toContainText(`Deployed checkout ${suffix}`);
  await expect(changes.getByRole('link', { name: 'Build 7' })).toHaveAttribute('href', 'https://ci.example/builds/7');
  await removeTeam(request, team.id);
});

// A sender with a JSON body of its own: the owner adds a generic webhook, fits its templates to a
// body the sender posts, sees what it becomes before saving, and the sender's posts then fire and
// resolve one incident.
test('a JSON sender is read by templates the owner tried first', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `json-${suffix}` } })).json();
  await signInPage(page);
  await page.goto(`/teams/${team.id}`);
  await hydrated(page);
  await page.getByText('Add an integration').click();
  await page.getByLabel('Integration name').fill('jobs');
  await page.getByLabel('Sent by').selectOption({ label: 'Generic JSON webhook' });
  await page.getByRole('button', { name: 'Create integration' }).click();
  const field = page.getByLabel('Webhook URL of “jobs”');
  await expect(field).toHaveValue(/\/api\/alertmanager\/webhook\/.{20,}$/);
  const url = new URL(await field.inputValue());

  const row = page.locator('li.integration').filter({ hasText: 'jobs' });
  await row.getByText('Change jobs').click();
  await row.getByText('Templates', { exact: true }).click();
  const form = row.locator('form.templates');
  await form.getByLabel('Title', { exact: true }).fill('{{ payload.job }} failed');
  await form.getByLabel('Severity', { exact: true }).fill('{{ payload.level }}');
  await form.getByLabel('Dedup key', { exact: true }).fill('{{ payload.job }}');
  await form.getByLabel('Resolved when', { exact: true }).fill('{{ payload.ok }}');
  await form.getByLabel('Labels', { exact: true }).fill('host: {{ payload.host }}');
  const failed = { job: `backup-${suffix}`, ok: false, level: 'error', host: 'db-1' };
  await form.getByLabel('Sample body').fill(JSON.stringify(failed));
  await form.getByRole('button', { name: 'Try it' }).click();
  const preview = form.getByRole('status', { name: 'What this body becomes' });
  await expect(preview).toContainText(`Fires: backup-${suffix} failed`);
  await expect(preview).toContainText('critical');
  await expect(preview).toContainText('host=db-1');
  // A template that does not compile is named before anything is saved.
  await form.getByLabel('Severity', { exact: true }).fill('{{ payload.level ');
  await form.getByRole('button', { name: 'Try it' }).click();
  await expect(form.getByRole('alert').filter({ hasText: /templates\.severity/i })).toBeVisible();
  await form.getByLabel('Severity', { exact: true }).fill('{{ payload.level }}');
  await form.getByRole('button', { name: 'Save templates' }).click();
  await expect(form.getByText('Saved: the next body is read with these templates.')).toBeVisible();

  // The sender posts: one incident, titled by the template, then resolved by its own body.
  expect((await request.post(url.pathname, { data: failed })).status()).toBe(200);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).click();
  await expect(page.getByRole('link', { name: new RegExp(`backup-${suffix} failed`) })).toBeVisible();
  expect((await request.post(url.pathname, { data: { ...failed, ok: true } })).status()).toBe(200);
  const listed = await (await request.get(`/api/incidents?team_id=${team.id}&archived=true`)).json();
  expect(listed.map((i: { state: string }) => i.state)).toEqual(['resolved']);
  await removeTeam(request, team.id);
});
