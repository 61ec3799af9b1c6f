import { expect, type APIRequestContext } from '@playwright/test';
import { test, PASSWORD, alertmanagerPayload, hydrated, removeTeam, signInApi } from './support';

// Storms are workable: the incident list narrows to mine / my teams / all (administrators),
// severity and state; many rows are drawn one line each; "Acknowledge all N shown" takes every
// shown incident nobody has yet, asked once; the tab's title counts the open incidents assigned
// to the person.

/// A team of its own with one owner (not alice) and `n` incidents, the first four critical.
async function storm(request: APIRequestContext, n: number) {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const username = `storm${suffix}`;
  const user = await (await request.post('/api/users', { data: { username, password: PASSWORD } })).json();
  const team = await (await request.post('/api/teams', { data: { name: `storm-${suffix}`, display_name: `Storm ${suffix}` } })).json();
  expect((await request.post(`/api/teams/${team.id}/members`, { data: { user_id: user.id, role: 'owner' } })).status()).toBe(201);
  const { key } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
  for (let i = 0; i < n; i++) {
    const payload = alertmanagerPayload(`Storm${i}x${suffix}`, `${i.toString(16).padStart(4, '0')}${suffix}`.padEnd(16, '0').slice(0, 16), `svc-${i}`, `host-${i}:9100`, {
      summary: `Storm ${i}`,
    });
    const severity = i < 4 ? 'critical' : 'warning';
    payload.alerts[0].labels.severity = severity;
    payload.commonLabels.severity = severity;
    expect((await request.post(`/api/alertmanager/webhook/${key}`, { data: payload })).status()).toBe(200);
  }
  const incidents = await (await request.get(`/api/incidents?team_id=${team.id}&limit=100`)).json();
  expect(incidents).toHaveLength(n);
  return { team, user, username, incidents: incidents as { id: number; severity: string; title: string }[] };
}

for (const scheme of ['dark', 'light'] as const) {
  test(`a storm is narrowed, read one line each and acknowledged at once (${scheme})`, async ({ page, request, browser }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const { team, user, username, incidents } = await storm(request, 12);
    // Two are assigned to the storm's owner: the tab's title and "Mine" count them.
    const [criticalOne] = incidents.filter((i) => i.severity === 'critical');
    const [warningOne] = incidents.filter((i) => i.severity === 'warning');
    for (const i of [criticalOne, warningOne]) {
      expect((await request.post(`/api/incidents/${i.id}/assign`, { data: { user_id: user.id } })).status()).toBe(200);
    }
    // Alice leaves the team: only "All teams", an administrator's choice, shows it to her.
    const me = await (await request.get('/api/me')).json();
    expect((await request.delete(`/api/teams/${team.id}/members/${me.id}`)).status()).toBe(204);

    expect((await page.request.post('/api/auth/login', { data: { username, password: PASSWORD } })).status()).toBe(200);
    await page.goto('/');
    await hydrated(page);
    await expect(page).toHaveTitle('(2) Incidents · Klaxon');
    const open = page.getByRole('list', { name: 'Open incidents' });
    await expect(open.getByRole('listitem')).toHaveCount(12);
    // Twelve rows are drawn one line each (plus the small line under it), and nothing is wider
    // than the phone.
    await expect(open).toHaveClass(/compact/);
    const heights = await open.getByRole('listitem').evaluateAll((rows) => rows.map((r) => r.getBoundingClientRect().height));
    for (const h of heights) expect(h).toBeLessThan(64);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    // Not an administrator: mine or my teams only.
    const segments = page.getByRole('navigation', { name: 'Whose incidents' });
    await expect(segments.getByRole('link')).toHaveText(['Mine (2)', 'My teams']);

    await segments.getByRole('link', { name: 'Mine (2)' }).click();
    await expect(page).toHaveURL(/\/\?show=mine$/);
    await expect(open.getByRole('listitem')).toHaveCount(2);
    await expect(segments.getByRole('link', { name: 'Mine (2)' })).toHaveAttribute('aria-current', 'page');
    await expect(page.getByText('2 of 12 open incidents')).toHaveCount(0);

    // Severity and state: critical and triggered, from the folded form.
    await segments.getByRole('link', { name: 'My teams' }).click();
    await expect(page).toHaveURL(/\/$/);
    await page.getByText('Filter by severity or state').click();
    await page.getByLabel('Severity').selectOption('critical');
    await page.getByLabel('State').selectOption('triggered');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page).toHaveURL(/severity=critical&state=triggered/);
    await expect(open.getByRole('listitem')).toHaveCount(4);
    await expect(page.getByText('4 of 12 open incidents: critical, triggered, of your teams.')).toBeVisible();
    // Four rows are not a storm: drawn whole again.
    await expect(open).not.toHaveClass(/compact/);

    // Acknowledge all four shown, asked once.
    const confirm = page.getByRole('button', { name: 'Yes, acknowledge 4 incidents' });
    await expect(confirm).toBeHidden();
    await page.getByText('Acknowledge all 4 shown').click();
    await confirm.click();
    await expect(page.getByText('No open incidents critical, triggered, of your teams.')).toBeVisible();
    const after = await (await request.get(`/api/incidents?team_id=${team.id}&limit=100`)).json();
    for (const i of after) {
      if (i.severity === 'critical') {
        expect(i.state).toBe('acknowledged');
        expect(i.acknowledged_by).toBe(username);
      } else {
        expect(i.state).toBe('triggered');
      }
    }
    await expect(page).toHaveTitle('(2) Incidents · Klaxon');

    // An administrator outside the team finds the storm under "All teams" only.
    const admin = await browser.newPage({ viewport: { width: 390, height: 844 } });
    expect((await admin.request.post('/api/auth/login', { data: { username: 'alice', password: PASSWORD } })).status()).toBe(200);
    await admin.goto('/');
    const title = /Storm0x/;
    const adminOpen = admin.getByRole('list', { name: 'Open incidents' });
    await expect(admin.getByRole('link', { name: 'All teams' })).toBeVisible();
    await expect(adminOpen.getByRole('link', { name: title })).toHaveCount(0);
    await admin.getByRole('link', { name: 'All teams' }).click();
    await expect(admin).toHaveURL(/\/\?show=all$/);
    await expect(adminOpen.getByRole('link', { name: title })).toBeVisible();
    await admin.close();
    await removeTeam(request, team.id);
  });
}

test('a storm of incidents acknowledged before the wasm arrives', async ({ browser, request }) => {
  const { team, username } = await storm(request, 3);
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  expect((await page.request.post('/api/auth/login', { data: { username, password: PASSWORD } })).status()).toBe(200);
  await page.goto('/?state=triggered');
  await expect(page.getByRole('list', { name: 'Open incidents' }).getByRole('listitem')).toHaveCount(3);
  await page.getByText('Acknowledge all 3 shown').click();
  await page.getByRole('button', { name: 'Yes, acknowledge 3 incidents' }).click();
  await expect(page.getByText('No open incidents triggered, of your teams.')).toBeVisible();
  const after = await (await request.get(`/api/incidents?team_id=${team.id}&state=acknowledged`)).json();
  expect(after).toHaveLength(3);
  await context.close();
  await removeTeam(request, team.id);
});
