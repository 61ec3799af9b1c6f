import { expect, type APIRequestContext } from '@playwright/test';
import { test, PASSWORD, hydrated, signInApi, pressSignIn, removeTeam } from './support';

// Dead man's switches on the team page: an owner adds one (a matcher without alertname is refused
// with the server's reason), heartbeats from two clusters make it healthy with a row per cluster,
// then the owner changes and removes it.

/// A Watchdog heartbeat from `cluster`, as Alertmanager posts it.
async function heartbeat(request: APIRequestContext, key: string, cluster: string) {
  const labels = { alertname: 'Watchdog', severity: 'none', cluster };
  const r = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: {
      version: '4',
      receiver: 'klaxon',
      status: 'firing',
      groupKey: `{}:{alertname="Watchdog", cluster="${cluster}"}`,
      groupLabels: { alertname: 'Watchdog', cluster },
      commonLabels: labels,
      commonAnnotations: {},
      externalURL: 'http://127.0.0.1:9093',
      truncatedAlerts: 0,
      alerts: [
        {
          status: 'firing',
          labels,
          annotations: { summary: 'The alerting pipeline is alive' },
          startsAt: new Date().toISOString(),
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'http://127.0.0.1:9090/graph',
          fingerprint: `watchdog-${cluster}`,
        },
      ],
    },
  });
  expect(r.status()).toBe(200);
}

test('owner adds, watches, changes and removes a switch', async ({ page, request }) => {
  test.setTimeout(120_000);
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await request.post('/api/teams', {
    data: { name: `platform-${suffix}`, display_name: `Platform ${suffix}` },
  });
  expect(team.status()).toBe(201);
  const teamId = (await team.json()).id;
  const integration = await request.post(`/api/teams/${teamId}/integrations`, {
    data: { name: 'prometheus' },
  });
  expect(integration.status()).toBe(201);
  const key = (await integration.json()).key;

  await page.goto(`/teams/${teamId}`);
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(new RegExp(`/teams/${teamId}$`));
  await hydrated(page);

  const section = page.getByRole('region', { name: "Dead man's switches" });
  await expect(section.getByText("No dead man's switches.")).toBeVisible();
  await section.getByText('Add a switch').click();
  const add = section.locator('details.inner').filter({ hasText: 'Add a switch' });
  // The form starts with the usual Watchdog switch; a matcher that does not name the alert is refused.
  await expect(add.getByLabel('Name')).toHaveValue('Watchdog');
  await add.getByLabel('Heartbeat matcher').fill('{cluster=~"prod-.*"}');
  await add.getByRole('button', { name: 'Add switch' }).click();
  await expect(add.getByRole('alert')).toContainText('Matcher must contain an alertname matcher');
  await add.getByLabel('Heartbeat matcher').fill('{alertname="Watchdog", cluster=~"prod-.*"}');
  await add.getByLabel('Dead after this much silence').fill('15m');
  await add.getByRole('button', { name: 'Add switch' }).click();
  // Added: the form closes and is back to the usual switch, the confirmation outside it.
  await expect(section.getByText('Added: Klaxon watches that heartbeat now.')).toBeVisible();
  await expect(add).not.toHaveAttribute('open', '');
  await expect(add.getByLabel('Dead after this much silence')).toHaveValue('10m');

  const row = section.locator('li.switch').filter({ hasText: 'Watchdog' });
  await expect(row.locator('.switch-status').first()).toHaveText('dormant');
  await expect(row).toContainText('dead after 15m of silence');
  await expect(row).toContainText('no heartbeat heard yet');

  // Heartbeats from two clusters: healthy, with a row per cluster.
  await heartbeat(request, key, 'prod-eu');
  await heartbeat(request, key, 'prod-us');
  await page.reload();
  await hydrated(page);
  await expect(row.locator('.row .switch-status')).toHaveText('healthy');
  const clusters = row.getByRole('list', { name: 'Clusters of Watchdog' });
  await expect(clusters.getByRole('listitem')).toHaveCount(2);
  await expect(clusters.getByRole('listitem').nth(0)).toContainText('prod-eu');
  await expect(clusters.getByRole('listitem').nth(0).locator('.switch-status')).toHaveText('healthy');
  await expect(clusters.getByRole('listitem').nth(1)).toContainText('prod-us');

  // Changed in place: a longer timeout and a lower severity.
  await row.getByText('Change Watchdog').click();
  await row.getByLabel('Dead after this much silence').fill('30m');
  await row.getByLabel('Severity of the incident').selectOption('warning');
  // Meanwhile a third cluster reports and someone changes the team (an integration added
  // elsewhere): the live update shows the third cluster in the row, and what was typed, and the
  // open form, are still there when it is saved.
  await heartbeat(request, key, 'prod-ap');
  expect((await request.post(`/api/teams/${teamId}/integrations`, { data: { name: 'second' } })).status()).toBe(201);
  await expect(row.getByRole('list', { name: 'Clusters of Watchdog' }).getByRole('listitem')).toHaveCount(3);
  await expect(row.locator('details.row-tools')).toHaveAttribute('open', '');
  await expect(row.getByLabel('Dead after this much silence')).toHaveValue('30m');
  await expect(row.getByLabel('Severity of the incident')).toHaveValue('warning');
  await row.getByRole('button', { name: 'Save' }).click();
  await expect(row).toContainText('dead after 30m of silence · warning');
  await expect(row.getByRole('list', { name: 'Clusters of Watchdog' }).getByRole('listitem')).toHaveCount(3);

  // Saved: the change form closed. Removed after a confirmation.
  const tools = row.locator('details.row-tools');
  if (!(await tools.evaluate((d) => (d as HTMLDetailsElement).open))) {
    await row.getByText('Change Watchdog').click();
  }
  await row.getByText('Remove…').click();
  // A live update between the two taps (a fourth cluster reports, the team changes) redraws
  // the row: the question stays open.
  await heartbeat(request, key, 'prod-sa');
  expect((await request.post(`/api/teams/${teamId}/integrations`, { data: { name: 'third' } })).status()).toBe(201);
  await expect(row.getByRole('list', { name: 'Clusters of Watchdog' }).getByRole('listitem')).toHaveCount(4);
  await row.getByRole('button', { name: 'Yes, remove Watchdog' }).click();
  await expect(section.getByText("No dead man's switches.")).toBeVisible();
  await expect(section.getByText('Removed: that heartbeat is no longer watched.')).toBeVisible();
  const left = await request.get(`/api/teams/${teamId}/deadman/switches`);
  expect(await left.json()).toEqual([]);
});

test('a cron job pings the heartbeat URL the owner added, and its failure shows at once', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `cron-${suffix}` } })).json();
  await page.goto(`/teams/${team.id}`);
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await hydrated(page);

  const section = page.getByRole('region', { name: "Dead man's switches" });
  const add = section.locator('details.inner').filter({ hasText: 'Add a heartbeat URL' });
  await add.getByText('Add a heartbeat URL').click();
  await add.getByLabel('Name').fill('Nightly backup');
  await add.getByLabel('Dead after this much silence').fill('25h');
  await add.getByRole('button', { name: 'Add heartbeat URL' }).click();
  // The URL is shown once, with the line to put after the job.
  const field = page.getByLabel('Heartbeat URL of “Nightly backup”');
  await expect(field).toHaveValue(/\/api\/heartbeat\/.{20,}$/);
  const url = new URL(await field.inputValue());
  await expect(page.getByText(`curl -fsS -m 10 --retry 5 ${url}`)).toBeVisible();
  const row = section.locator('li.switch').filter({ hasText: 'Nightly backup' });
  await expect(row).toContainText('pinged at its heartbeat URL');
  await expect(row.locator('.switch-status')).toHaveText('dormant');

  // A run begins: shown as running. Once the page is left, the URL is not shown again.
  expect((await request.get(`${url.pathname}/start`)).status()).toBe(200);
  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel('Heartbeat URL of “Nightly backup”')).toHaveCount(0);
  expect(await page.content()).not.toContain(url.pathname);
  await expect(row).toContainText('running since');
  // It succeeds, as the cron line pings.
  expect(await (await request.get(url.pathname)).text()).toBe('OK');
  await page.reload();
  await expect(row.locator('.switch-status')).toHaveText('healthy');
  await expect(row).not.toContainText('running since');
  // The next run fails, saying why: dead at once.
  expect((await request.post(`${url.pathname}/fail`, { data: 'pg_dump: disk full' })).status()).toBe(200);
  await page.reload();
  await expect(row.locator('.switch-status')).toHaveText('dead');
  await expect(row).toContainText('failed: pg_dump: disk full');
  // The dead switch opened an incident; the team goes with it, so later files start with none open.
  await removeTeam(request, team.id);
});
