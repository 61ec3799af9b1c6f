import { expect } from '@playwright/test';
import { test, PASSWORD, alertmanagerPayload, hydrated, signInApi, pressSignIn } from './support';

// Paging from the phone: a test page from the profile (refused: this server has no push service), a team's
// escalation ladder edited, checked in the browser, refused and then accepted by the server, and an
// incident's paging history showing the opening page retrying with the push service's error.

test('test page, escalation ladder and paging history', async ({ page, request }) => {
  test.setTimeout(120_000);
  await signInApi(request);
  const suffix = Date.now().toString(36);

  // Sign in through the profile's deep link.
  await page.goto('/me');
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/me$/);
  await hydrated(page);

  // A push topic, then a test page: this server has no push service, and says which setting is missing.
  const own = page.locator('details', { has: page.locator('#push-topic') });
  if ((await own.getAttribute('open')) === null) await own.locator('summary').click();
  await page.getByLabel('ntfy topic', { exact: true }).fill(`alice-${suffix}`);
  await page.getByRole('button', { name: 'Save topic' }).click();
  await expect(page.getByText('Saved.', { exact: true })).toBeVisible();
  await page.getByRole('button', { name: 'Send test page' }).click();
  const testError = page.getByRole('alert').filter({ hasText: 'KLAXON_NTFY_URL' });
  await expect(testError).toHaveText('No push service is configured (KLAXON_NTFY_URL).');
  await expect(page.getByText(/Test page sent/)).toBeHidden();

  // A team; its page leads to the ladder, which starts empty.
  const displayName = `Checkout ${suffix}`;
  const team = await request.post('/api/teams', {
    data: { name: `checkout-${suffix}`, display_name: displayName },
  });
  expect(team.status()).toBe(201);
  const teamId = (await team.json()).id;
  await page.goto(`/teams/${teamId}`);
  await hydrated(page);
  const ladderLink = page.getByRole('link', { name: /Escalation ladder/ });
  await expect(ladderLink).toContainText('No ladder');
  await ladderLink.click();
  await expect(page).toHaveURL(new RegExp(`/teams/${teamId}/escalation$`));
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Escalation');
  await expect(page.getByText(/^No ladder: .*pages them again every few minutes \(how often is the administrator's “Page again every”\) until someone acknowledges/)).toBeVisible();

  // One level paging whoever is on call, after 5 minutes.
  await page.getByRole('button', { name: 'Add a level' }).click();
  const level1 = page.getByRole('group', { name: 'Level 1', exact: true });
  await level1.getByLabel('Timeout').fill('5m');
  await level1.getByLabel('Whoever is on call today').check();
  await expect(level1.getByLabel('alice', { exact: true })).not.toBeChecked();
  const save = page.getByRole('button', { name: 'Save ladder' });
  const problem = page.getByRole('alert').filter({ hasText: /Level 1/ });

  // Nobody is on the rota yet: the server refuses, and says why.
  await save.click();
  await expect(problem).toHaveText(
    'Level 1: no reachable target (nobody with a push topic or a verified contact method is on the rota today or later).',
  );

  // With alice on call today it is accepted, and still there after a reload.
  const me = await request.get('/api/me');
  const aliceId = (await me.json()).id;
  const today = new Date().toISOString().slice(0, 10);
  const shift = await request.post(`/api/teams/${teamId}/schedule`, {
    data: { user_id: aliceId, dates: [today] },
  });
  expect(shift.status()).toBe(201);
  await save.click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(problem).toBeHidden();
  await page.reload();
  await hydrated(page);
  await expect(level1.getByLabel('Timeout')).toHaveValue('5m');
  await expect(level1.getByLabel('Whoever is on call today')).toBeChecked();
  await expect(level1.getByLabel('alice', { exact: true })).not.toBeChecked();
  await expect(page.getByRole('group', { name: 'Level 2' })).toHaveCount(0);

  // Timeouts are checked in the browser with the server's rules before anything is sent.
  await level1.getByLabel('Timeout').fill('soon');
  await save.click();
  await expect(problem).toHaveText('Level 1: timeout "soon" is not a duration like 90s, 15m, 1h30m or 7d.');
  await level1.getByLabel('Timeout').fill('30s');
  await save.click();
  await expect(problem).toHaveText('Level 1: timeout must be between 1m and 1d.');
  await page.reload();
  await hydrated(page);
  await expect(level1.getByLabel('Timeout')).toHaveValue('5m');

  // The team page sums the ladder up.
  await page.getByRole('link', { name: `← ${displayName}` }).click();
  await expect(page.getByRole('link', { name: /Escalation ladder/ })).toContainText('1 level');

  // An alert opens an incident; with no push service the page to alice keeps retrying, and says why.
  const integration = await request.post(`/api/teams/${teamId}/integrations`, {
    data: { name: 'prometheus', kind: 'alertmanager' },
  });
  expect(integration.status()).toBe(201);
  const { key } = await integration.json();
  const alertname = `CheckoutErrors${suffix}`;
  const fingerprint = `${suffix}${Math.random().toString(16).slice(2)}`.slice(0, 16);
  const hook = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(alertname, fingerprint, 'checkout', 'api-1:9100', { summary: 'Checkout error rate above 5%' }),
  });
  expect(hook.status()).toBe(200);

  await page.goto('/');
  await page.getByRole('link', { name: new RegExp(alertname) }).click();
  await expect(page).toHaveURL(/\/incidents\/\d+$/);
  const incidentId = page.url().split('/').pop();
  await hydrated(page);
  const paging = page.getByRole('region', { name: 'Paging' });
  // The notifier runs right after the webhook; the page refreshes itself every 10 seconds.
  const toAlice = paging.getByRole('listitem').filter({ hasText: 'alice' }).first();
  await expect(toAlice).toContainText('retrying', { timeout: 30_000 });
  await expect(toAlice).toContainText('no push service is configured (KLAXON_NTFY_URL)');
  await expect(toAlice).toContainText(/Next try/);

  // Leave nothing open for the other tests.
  const resolve = await request.post(`/api/incidents/${incidentId}/resolve`, { data: {} });
  expect(resolve.status()).toBe(200);
});
