import { expect, type Page } from '@playwright/test';
import { test, alertmanagerPayload, hydrated, removeTeam, signInApi, signInPage } from './support';

// The incident page keeps the next step in view: who has it, what happens next and when, the
// last fix right under the summary, the alert's source graph, and a warning before resolving an
// incident whose alerts still fire. An unknown incident answers 404.

test('the next step, the last fix and the source graph are in view', async ({ page, request }) => {
  await signInApi(request);
  const me = await (await request.get('/api/me')).json();
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `next-${suffix}` } })).json();
  // Alice can be paged, so a two-level ladder names her at both levels.
  expect((await request.put(`/api/users/${me.id}/push-topic`, { data: { push_topic: `alice-${suffix}` } })).status()).toBe(200);
  const ladder = await request.put(`/api/teams/${team.id}/escalation`, {
    data: {
      levels: [
        { timeout: '10m', targets: [{ type: 'user', user_id: me.id }] },
        { timeout: '15m', targets: [{ type: 'user', user_id: me.id }] },
      ],
      repeat: 0,
    },
  });
  expect(ladder.status()).toBe(200);
  const { key } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
  const alertname = `QueueStuck${suffix}`;
  const fire = (fingerprint: string) =>
    request.post(`/api/alertmanager/webhook/${key}`, {
      data: alertmanagerPayload(alertname, fingerprint, 'queue', 'queue-1:9100', { summary: 'Queue is not draining' }),
    });

  // Last time: an incident of the same alert, resolved with what fixed it.
  expect((await fire(`${suffix}aaaa`.padEnd(16, '0').slice(0, 16))).status()).toBe(200);
  const [first] = await (await request.get(`/api/incidents?team_id=${team.id}`)).json();
  expect(
    (await request.post(`/api/incidents/${first.id}/resolve`, { data: { resolution: 'Restarted the consumer; see https://wiki.example/queue' } })).status(),
  ).toBe(200);
  // Alertmanager resolves it too, so the next firing opens a new incident.
  const resolved = alertmanagerPayload(alertname, `${suffix}aaaa`.padEnd(16, '0').slice(0, 16), 'queue', 'queue-1:9100', {});
  resolved.status = 'resolved';
  resolved.alerts[0].status = 'resolved';
  resolved.alerts[0].endsAt = new Date().toISOString();
  expect((await request.post(`/api/alertmanager/webhook/${key}`, { data: resolved })).status()).toBe(200);
  expect((await fire(`${suffix}bbbb`.padEnd(16, '0').slice(0, 16))).status()).toBe(200);
  const open = (await (await request.get(`/api/incidents?team_id=${team.id}`)).json()).find((i: any) => i.state === 'triggered');

  await signInPage(page);
  await page.goto(`/incidents/${open.id}`);
  await hydrated(page);
  // Level 1 paged her at the opening; level 2 is next, in ten minutes.
  const next = page.locator('.next-step');
  await expect(next).toContainText(/Escalates to level 2 — you — at \d{4}-\d\d-\d\d \d\d:\d\d .* unless acknowledged/);
  // The last fix sits right under the summary, with its link, before the facts.
  const fix = page.locator('.last-fix');
  await expect(fix).toContainText(`Last time (#${first.id}, fixed by alice): Restarted the consumer`);
  await expect(fix.getByRole('link', { name: 'https://wiki.example/queue' })).toBeVisible();
  const order = await page.evaluate(() => {
    const fix = document.querySelector('.last-fix')!;
    const facts = document.querySelector('.facts')!;
    return fix.compareDocumentPosition(facts) & Node.DOCUMENT_POSITION_FOLLOWING;
  });
  expect(order).toBeTruthy();
  // The source graph Alertmanager sent.
  await expect(page.getByRole('link', { name: 'Open in Prometheus' })).toHaveAttribute(
    'href',
    'http://127.0.0.1:9090/graph?g0.expr=up',
  );
  expect((await (await request.get(`/api/incidents/${open.id}`)).json()).alerts[0].generator_url).toBe(
    'http://127.0.0.1:9090/graph?g0.expr=up',
  );

  // Resolving while the alert fires warns, and offers the silence instead.
  await page.getByText('Resolve', { exact: true }).click();
  const warning = page.locator('#still-firing');
  await expect(warning).toContainText('Its alert is still firing');
  await warning.getByRole('link', { name: 'Silence it instead' }).click();
  await expect(page.locator('#silence')).toHaveAttribute('open', '');

  // Acknowledged, nothing more is paged: the line goes.
  await page.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(page.locator('.incident-head .state')).toHaveText('acknowledged');
  await expect(next).toHaveCount(0);

  await removeTeam(request, team.id);
});

test('an incident that does not exist answers 404 with a way back', async ({ page, request }) => {
  await signInApi(request);
  await signInPage(page);
  const answer = await page.goto('/incidents/999999');
  expect(answer!.status()).toBe(404);
  await expect(page.locator('.failed .error').first()).toContainText('Not found');
  const team = await page.goto('/teams/999999');
  expect(team!.status()).toBe(404);
});
