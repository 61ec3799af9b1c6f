import { expect, type Browser, type Page } from '@playwright/test';
import { test, PASSWORD, alertmanagerPayload, hydrated, removeTeam, signInApi, signInPage, pressSignIn, teamWithIncident } from './support';

// Live updates: what one responder does shows on another's phone without a reload, through the
// server-sent event stream; a phone that loses the stream says so and how old its page is.

const phone = { viewport: { width: 390, height: 844 } };

async function signIn(browser: Browser, username: string, password: string): Promise<Page> {
  const context = await browser.newContext(phone);
  const page = await context.newPage();
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/$/);
  return page;
}

/// Marks the document: the mark survives any update and is gone after a reload.
async function mark(page: Page) {
  await page.evaluate(() => ((window as any).klaxonMark = 'not reloaded'));
}
async function notReloaded(page: Page) {
  expect(await page.evaluate(() => (window as any).klaxonMark)).toBe('not reloaded');
}

test('a change made on one phone shows on another without a reload', async ({ browser, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await request.post('/api/teams', { data: { name: `live-${suffix}` } });
  expect(team.status()).toBe(201);
  const teamId = (await team.json()).id;
  const bea = `bea-${suffix}`;
  const user = await request.post('/api/users', { data: { username: bea, password: 'bea password' } });
  expect(user.status()).toBe(201);
  const added = await request.post(`/api/teams/${teamId}/members`, { data: { user_id: (await user.json()).id } });
  expect(added.status()).toBe(201);
  const { key } = await (
    await request.post(`/api/teams/${teamId}/integrations`, { data: { name: 'prometheus' } })
  ).json();

  // Alice watches the incident list; an alert arrives.
  const alice = await signIn(browser, 'alice', PASSWORD);
  await hydrated(alice);
  await expect(alice.getByText('Live', { exact: true })).toBeVisible();
  await mark(alice);
  const alertname = `Latency${suffix}`;
  const hook = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(alertname, `${suffix}aa`.padEnd(16, '0'), 'api', 'api-1:9100', {
      summary: 'p99 above 2 s',
    }),
  });
  expect(hook.status()).toBe(200);
  const row = alice.getByRole('link', { name: new RegExp(alertname) });
  await expect(row).toContainText('triggered');
  await notReloaded(alice);

  // She opens it; Bea acknowledges it on her own phone.
  await row.click();
  await expect(alice).toHaveURL(/\/incidents\/\d+$/);
  const incidentPath = new URL(alice.url()).pathname;
  await hydrated(alice);
  await mark(alice);
  const state = alice.locator('.incident-head .state');
  await expect(state).toHaveText('triggered');
  const beaPage = await signIn(browser, bea, 'bea password');
  await beaPage.goto(incidentPath);
  await hydrated(beaPage);
  const acknowledged = Date.now();
  await beaPage.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(beaPage.locator('.incident-head .state')).toHaveText('acknowledged');
  await expect(state).toHaveText('acknowledged', { timeout: 10_000 });
  test.info().annotations.push({ type: 'live update', description: `${Date.now() - acknowledged} ms after the click` });
  await expect(alice.locator('.timeline')).toContainText(bea);
  await notReloaded(alice);

  // The stream is lost (the browser cannot reach /api/events after a reload): the page says so
  // and how old it is; what changes meanwhile is there once the stream is back.
  await alice.route('**/api/events*', (route) => route.abort('internetdisconnected'));
  await alice.reload();
  await hydrated(alice);
  await mark(alice);
  const stale = alice.getByRole('alert').filter({ hasText: 'Not live' });
  await expect(stale).toBeVisible({ timeout: 10_000 });
  await expect(stale).toContainText(/Showing what was loaded at \d\d:\d\d/);
  const note = await request.post(`/api/incidents${incidentPath.replace('/incidents', '')}/notes`, {
    data: { text: `checked by ${suffix}` },
  });
  expect(note.status()).toBe(201);
  await alice.unroute('**/api/events*');
  await expect(stale).toBeHidden({ timeout: 15_000 });
  await expect(alice.getByText('Live', { exact: true })).toBeVisible();
  await expect(alice.locator('.notes')).toContainText(`checked by ${suffix}`, { timeout: 10_000 });
  await notReloaded(alice);
  await beaPage.context().close();
  await alice.context().close();
  await removeTeam(request, teamId);
});

// A part of the page someone opened (a fold: "Remove a shift", "Change", "Add a note") stays open
// with what they chose in it while a change made elsewhere draws its section again.
test('a fold opened on a page stays open while another change is shown in it', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `fold-${suffix}` } })).json();
  const alice = (await (await request.get('/api/me')).json()).id;
  const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
  const give = (date: string) => request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: alice, dates: [date] } });
  expect((await give(day(1))).status()).toBe(201);

  await signInPage(page);
  await page.goto(`/teams/${team.id}`);
  await hydrated(page);
  const fold = page.locator('details', { has: page.getByText('Remove a shift', { exact: true }) });
  await fold.getByText('Remove a shift', { exact: true }).click();
  const shift = fold.getByLabel('Shift');
  await expect(shift.locator('option')).toHaveCount(1);

  // Another date is given from elsewhere: the list of shifts is drawn again with it.
  await mark(page);
  expect((await give(day(2))).status()).toBe(201);
  await expect(shift.locator('option')).toHaveCount(2, { timeout: 10_000 });
  await expect(fold).toHaveAttribute('open', '');
  await expect(shift).toBeVisible();
  await notReloaded(page);
  await removeTeam(request, team.id);
});

// A page's stream resumes where the server rendered the page: what changed while the page loaded
// is replayed and shown, and a page nothing changed on is not loaded a second time when it goes
// live (it used to be, every time: a request and a redraw of the whole list on every visit).
test('a page shows what changed while it loaded, and is not loaded again when nothing did', async ({ page }) => {
  const { teamId, key, suffix, incidentId } = await teamWithIncident(page.request, 'resume', 'Resume');
  const loads: string[] = [];
  page.on('request', (r) => {
    const rpc = new URL(r.url()).pathname.match(/^\/rpc\/(get_incident_board|incident_page)/);
    if (rpc) loads.push(rpc[1]);
  });
  const isStream = (r: { url(): string }) => new URL(r.url()).pathname === '/api/events';
  // The page's timers (the stream's batching among them) run only as the test moves its clock.
  await page.clock.install();
  const tick = () => page.clock.runFor(500);
  // The list's stream is held back until the test lets it through: an alert comes in between.
  let letThrough!: () => void;
  const held = new Promise<void>((resolve) => (letThrough = resolve));
  await page.route('**/api/events*', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto('/');
  await hydrated(page);
  const later = `Later${suffix}`;
  const hook = await page.request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(later, `${suffix}later`.padEnd(16, '0').slice(0, 16), 'resume', 'resume-2:9100', {
      summary: 'came in while the list loaded',
    }),
  });
  expect(hook.status()).toBe(200);
  const opened = page.waitForResponse(isStream);
  letThrough();
  await opened;
  const row = page.getByRole('link', { name: new RegExp(later) });
  await expect.poll(async () => (await tick(), row.count())).toBe(1);
  await page.unroute('**/api/events*');

  // An incident's page, nothing changing: live, and loaded once, with its HTML.
  loads.length = 0;
  const live = page.waitForResponse(isStream);
  await page.goto(`/incidents/${incidentId}`);
  await hydrated(page);
  await live;
  await tick();
  await tick();
  await expect(page.locator('.freshness .updated')).toBeVisible();
  // A note from elsewhere is what loads it again, once.
  const note = await page.request.post(`/api/incidents/${incidentId}/notes`, { data: { text: 'from the desk' } });
  expect(note.status()).toBe(201);
  await expect.poll(async () => (await tick(), page.locator('.notes').textContent())).toContain('from the desk');
  expect(loads).toEqual(['incident_page']);
  await removeTeam(page.request, teamId);
});
