import { expect } from '@playwright/test';
import { test, hydrated, signInApi, signInPage, removeTeam } from './support';

// An owner of two teams routes one integration's database alerts to the other team and drops its
// heartbeats: the rules are built in the app, simulated on a request like Alertmanager's, refused
// where they are wrong, saved, and the next request goes where they say.
test('routing rules are simulated, saved and route the next alerts', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const web = await (await request.post('/api/teams', { data: { name: `web-${suffix}` } })).json();
  const db = await (await request.post('/api/teams', { data: { name: `db-${suffix}` } })).json();
  const made = await (
    await request.post(`/api/teams/${web.id}/integrations`, { data: { name: 'prom' } })
  ).json();
  const url = new URL(made.webhook_url);

  await signInPage(page);
  await page.goto(`/teams/${web.id}`);
  await hydrated(page);
  const row = page.locator('li.integration').filter({ hasText: 'prom' });
  await row.getByText('Change prom').click();
  await row.getByText('Routing rules (0)').click();
  const form = row.locator('form.rules');

  await form.getByRole('button', { name: 'Add a rule' }).click();
  const first = form.getByRole('group', { name: 'Rule 1' });
  await first.getByLabel('Matchers').fill('{service=~"db-.*"}');
  await first.getByLabel('Then').selectOption({ label: 'Send it to another team' });
  await first.getByLabel('Team (its name; one you are in)').fill(db.name);
  await first.getByLabel('Severity').selectOption('critical');
  await expect(first.getByLabel('Team (its name; one you are in)')).toHaveValue(db.name);
  await form.getByRole('button', { name: 'Add a rule' }).click();
  const second = form.getByRole('group', { name: 'Rule 2' });
  await second.getByLabel('Matchers').fill('{alertname="Heartbeat"');
  await second.getByLabel('Then').selectOption({ label: 'Drop it (no alert, no page)' });
  // The dropping rule goes first; what was typed moves with it.
  await second.getByRole('button', { name: 'Move up' }).click();
  const dropping = form.getByRole('group', { name: 'Rule 1' });
  await expect(dropping.getByLabel('Matchers')).toHaveValue('{alertname="Heartbeat"');

  const payload = {
    version: '4', status: 'firing', receiver: 'klaxon', groupKey: `{}:{x="${suffix}"}`,
    alerts: [
      { status: 'firing', fingerprint: `db-${suffix}`, startsAt: '2026-12-06T03:00:00Z',
        labels: { alertname: `DiskFull-${suffix}`, service: 'db-main', severity: 'warning' } },
      { status: 'firing', fingerprint: `hb-${suffix}`, startsAt: '2026-12-06T03:00:00Z',
        labels: { alertname: 'Heartbeat' } },
    ],
  };
  await form.getByLabel('Sample request').fill(JSON.stringify(payload));
  // A matcher that does not parse is named by the server before anything is kept.
  await form.getByRole('button', { name: 'Simulate' }).click();
  await expect(form.getByRole('alert').filter({ hasText: 'rules[0].matchers' })).toBeVisible();
  await dropping.getByLabel('Matchers').fill('{alertname="Heartbeat"}');
  await form.getByRole('button', { name: 'Simulate' }).click();
  const result = form.getByRole('status', { name: 'What this request would do' });
  await expect(result).toContainText(`DiskFull-${suffix}: routing rule 2`);
  await expect(result).toContainText(`to team ${db.name}, severity critical`);
  await expect(result).toContainText('Heartbeat: routing rule 1 ({alertname="Heartbeat"}): dropped');
  await form.getByRole('button', { name: 'Save rules' }).click();
  await expect(form.getByText('Saved: the next alerts are routed by these rules.')).toBeVisible();
  await expect(row.getByText('Routing rules (2)')).toBeVisible();

  // Alertmanager posts: the database alert pages the other team, the heartbeat nowhere.
  const answer = await request.post(url.pathname, { data: payload });
  expect(await answer.json()).toMatchObject({ accepted: 1, ignored: 1 });
  const atDb = await (await request.get(`/api/incidents?team_id=${db.id}`)).json();
  expect(atDb.map((i: { title: string }) => i.title)).toEqual([`DiskFull-${suffix}`]);
  const atWeb = await (await request.get(`/api/incidents?team_id=${web.id}`)).json();
  expect(atWeb).toEqual([]);
  await removeTeam(request, db.id);
  await removeTeam(request, web.id);
});
