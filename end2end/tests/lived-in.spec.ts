import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { test, PASSWORD, axeViolations, alertmanagerPayload, hydrated, liveOpened, removeTeam, signInApi, signInPage } from './support';

// The app as a team sees it after a few months, not empty: days held by a short and a long name,
// covers in force and to come, an API key with a long name, 150 open incidents of one storm and
// one with a 200-character label. Every page passes axe in both schemes and stays inside the
// phone with its controls' words whole; then each thing a new team found broken there.

test.use({ bypassCSP: true });

type World = {
  team: number;
  alice: number;
  long: { id: number; username: string };
  key: number;
  storm: { id: number; title: string }[];
  labelled: number;
  resolved: number;
};

let api: APIRequestContext;
let world: World;

function iso(d: Date) {
  return d.toISOString().slice(0, 10);
}

async function seed(request: APIRequestContext): Promise<World> {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const alice = (await (await request.get('/api/me')).json()).id as number;
  const username = `maximiliana-${suffix}`;
  const long = await (await request.post('/api/users', { data: { username, password: PASSWORD } })).json();
  const team = await (
    await request.post('/api/teams', {
      data: { name: `lived-${suffix}`, display_name: 'Payments Platform Checkout Reliability Engineering' },
    })
  ).json();
  expect((await request.post(`/api/teams/${team.id}/members`, { data: { user_id: long.id, role: 'member' } })).status()).toBe(201);
  // Alice (a short name, like most) holds today and every other day; the long name the rest.
  const day = (n: number) => iso(new Date(Date.now() + n * 86_400_000));
  const days = (odd: number) => [...Array(14).keys()].filter((n) => n % 2 === odd).map(day);
  // (Yesterday too: before the hand-off time, yesterday's holder is the one on call.)
  for (const [user, dates] of [[alice, [day(-1), ...days(0)]], [long.id, days(1)]] as const) {
    expect((await request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: user, dates } })).status()).toBe(201);
  }
  // A cover in force ("End now") and one to come ("Remove").
  const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
  for (const [from, to] of [[0, 2], [5, 7]]) {
    const cover = await request.post(`/api/teams/${team.id}/covers`, {
      data: { user_id: long.id, covered_user_id: alice, starts_at: at(from), ends_at: at(to) },
    });
    expect(cover.status()).toBe(201);
  }
  const key = await (
    await request.post(`/api/users/${alice}/api-keys`, { data: { name: `grafana-dashboard-exporter-for-payments-${suffix}` } })
  ).json();
  const { key: hook } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
  const send = async (alertname: string, i: number, summary: string, service: string) => {
    const payload = alertmanagerPayload(alertname, `${i.toString(16).padStart(5, '0')}${suffix}`.padEnd(16, '0').slice(0, 16), service, `node-${i}:9100`, { summary });
    expect((await request.post(`/api/alertmanager/webhook/${hook}`, { data: payload })).status()).toBe(200);
  };
  // One storm: the same alert on 150 nodes, titles alike but for the node.
  for (let i = 0; i < 150; i++) {
    await send(`StormDiskPressure${suffix}`, i, `disk almost full on node-${i}.payments.prod`, `disk-${i}`);
  }
  // And one whose service label is 200 characters long.
  const service = 'checkout-'.repeat(23).slice(0, 200);
  await send(`CheckoutLatency${suffix}`, 999, 'checkout latency over budget', service);
  const open = await (await request.get(`/api/incidents?team_id=${team.id}&limit=200`)).json();
  expect(open).toHaveLength(151);
  const labelled = open.find((i: { title: string }) => i.title.startsWith('CheckoutLatency')).id;
  // A resolved one, listed under the open ones.
  const resolved = open.find((i: { title: string }) => i.title.includes('node-149.')).id;
  expect((await request.post(`/api/incidents/${resolved}/resolve`, { data: {} })).status()).toBe(200);
  const storm = open.filter((i: { id: number; title: string }) => i.title.startsWith('Storm') && i.id !== resolved);
  return { team: team.id, alice, long: { id: long.id, username }, key: key.id, storm, labelled, resolved };
}

test.beforeAll(async ({ playwright, instance }) => {
  api = await playwright.request.newContext({ baseURL: instance.baseURL });
  world = await seed(api);
});

test.afterAll(async () => {
  await removeTeam(api, world.team);
  expect((await api.delete(`/api/users/${world.alice}/api-keys/${world.key}`)).status()).toBe(204);
  await api.dispose();
});

/// Controls whose words are broken across lines ("E / n / d now"): each word of a visible
/// button, summary, button-like link, chip or calendar name must sit on one line.
async function brokenWords(page: Page) {
  return page.evaluate(() => {
    const broken: string[] = [];
    const controls = document.querySelectorAll('button, summary, a.button, a.segment, .chip, .calendar .holder');
    for (const el of Array.from(controls)) {
      if (!(el as HTMLElement).offsetParent) continue;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        // A hyphen or a slash is a place a line may break; inside the letters between them is not.
        for (const m of node.textContent!.matchAll(/[^\s\-\/]+/g)) {
          const range = document.createRange();
          range.setStart(node, m.index!);
          range.setEnd(node, m.index! + m[0].length);
          const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(`${el.tagName.toLowerCase()} "${el.textContent!.trim().slice(0, 40)}"`);
        }
      }
    }
    return [...new Set(broken)];
  });
}

async function ready(page: Page, path: string) {
  await page.goto(path);
  await hydrated(page);
  // Sections that load after the page (lists, charts) are part of what is checked.
  await expect(page.locator('.loading')).toHaveCount(0, { timeout: 10_000 });
}

for (const scheme of ['dark', 'light'] as const) {
  test(`every page of a lived-in install passes axe and keeps its words whole (${scheme})`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.emulateMedia({ colorScheme: scheme });
    await signInPage(page);
    const t = world.team;
    const paths = [
      '/',
      `/incidents/${world.labelled}`,
      '/schedule',
      '/teams',
      `/teams/${t}`,
      `/teams/${t}/escalation`,
      `/teams/${t}/rota`,
      `/teams/${t}/reports`,
      '/me',
      '/admin',
    ];
    const report: Record<string, unknown> = {};
    for (const path of paths) {
      await ready(page, path);
      const found: Record<string, unknown> = {};
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width !== 390) found.width = width;
      const broken = await brokenWords(page);
      if (broken.length) found.broken = broken;
      const v = await axeViolations(page);
      if (v.length) found.axe = v;
      if (Object.keys(found).length) report[path] = found;
    }
    expect(report).toEqual({});
  });
}

test('calendar days show whole names, are named by what they show, and take a finger', async ({ page }) => {
  await signInPage(page);
  await ready(page, `/teams/${world.team}`);
  const today = page.locator('.calendar td.today .day-link');
  const n = String(new Date().getUTCDate());
  // The link's name starts with what it shows, for people who speak to their phone.
  await expect(today).toHaveAccessibleName(new RegExp(`^${n} alice\\b.*Give this day$`));
  const holders = await page.locator('.calendar .holder').evaluateAll((all) =>
    all
      .filter((h) => h.textContent)
      .map((h) => ({ name: h.textContent!, whole: h.scrollWidth <= h.clientWidth, height: h.getBoundingClientRect().height })),
  );
  const alice = holders.filter((h) => h.name === 'alice');
  const long = holders.filter((h) => h.name === world.long.username);
  expect(alice.length).toBeGreaterThan(0);
  // A short name whole on one line; a long one on one line too, cut at its end, not broken.
  for (const h of [...alice, ...long]) expect(h.height).toBeLessThan(16);
  for (const h of alice) expect(h.whole).toBe(true);
  const heights = await page.locator('.calendar .day-link').evaluateAll((all) => all.map((a) => a.getBoundingClientRect().height));
  for (const h of heights) expect(h).toBeGreaterThanOrEqual(44);
});

test('the covers list and the API keys keep their buttons on one line', async ({ page }) => {
  await signInPage(page);
  await ready(page, `/teams/${world.team}`);
  const covers = page.getByRole('list', { name: 'Covers' });
  for (const name of ['End now', 'Remove']) {
    const box = (await covers.getByText(name, { exact: true }).boundingBox())!;
    expect(box.height, name).toBeLessThanOrEqual(48);
    expect(box.width, name).toBeGreaterThan(box.height);
  }
  await ready(page, '/me');
  const del = (await page.getByRole('button', { name: /^Delete key grafana-dashboard-exporter/ }).boundingBox())!;
  expect(del.height).toBeLessThanOrEqual(48);
  expect(del.width).toBeGreaterThan(del.height);
});

test('a storm of alike titles shows each row the part that tells it apart', async ({ page }) => {
  await signInPage(page);
  const live = liveOpened(page);
  await ready(page, '/');
  // A reload the live stream brings (an event of the storm's) draws the filter form again:
  // wait for the stream before opening the form.
  await live();
  const rows = page.getByRole('list', { name: 'Open incidents' }).locator('li');
  await expect(rows).toHaveCount(150);
  await expect(page.getByRole('list', { name: 'Open incidents' })).toHaveClass(/compact/);
  // What the eye reads: each storm row's node, whole and inside the row.
  const seen = await rows.evaluateAll((all) =>
    all
      .map((li) => li.querySelector('.differs') as HTMLElement)
      .filter((d) => d && /node-/.test(d.textContent!))
      .map((d) => {
        const box = d.getBoundingClientRect();
        const row = d.closest('li')!.getBoundingClientRect();
        return { text: d.textContent!, whole: d.scrollWidth <= d.clientWidth && box.right <= row.right };
      }),
  );
  expect(seen.length).toBe(world.storm.length);
  expect(seen.filter((s) => !s.whole)).toEqual([]);
  expect(new Set(seen.map((s) => s.text)).size).toBe(seen.length);
  // The filter form sends only what it asks.
  await page.getByText('Filter by severity or state').click();
  await page.getByLabel('Severity').selectOption('critical');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await expect(page).toHaveURL(/\/\?show=[a-z]+&severity=critical&state=open$/);
});

test('an incident: a long label leaves the facts on the first screen, a note is stored once', async ({ page }) => {
  await signInPage(page);
  const live = liveOpened(page);
  await ready(page, `/incidents/${world.labelled}`);
  await live();
  await expect(page.locator('.facts')).toBeInViewport();
  await page.locator('dl.labels').getByText('Whole value').click();
  await expect(page.locator('.labels .full-title p')).toHaveText('checkout-'.repeat(23).slice(0, 200));

  await page.getByText('Add a note', { exact: true }).click();
  const text = page.getByLabel('Note', { exact: true });
  await text.fill('Cleared the disk of node-3; watching.');
  await page.getByRole('button', { name: 'Add note' }).click();
  await expect(page.locator('.note-text')).toHaveText(['Cleared the disk of node-3; watching.']);
  // Stored: the form is folded and empty, so a second tap cannot add it twice.
  await expect(text).toBeHidden();
  await expect(text).toHaveValue('');
  const detail = await (await api.get(`/api/incidents/${world.labelled}`)).json();
  expect(detail.notes).toHaveLength(1);
});

test('the team page: invites under the members, the only owner offered nothing refused', async ({ page }) => {
  await signInPage(page);
  await ready(page, `/teams/${world.team}`);
  const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
  expect(headings.indexOf('Invite links')).toBe(headings.indexOf('Members') + 1);
  const members = page.locator('.list.members > li');
  const aliceRow = members.filter({ hasText: /^alice/ });
  await expect(aliceRow).toContainText("The team's only owner");
  await expect(aliceRow.getByRole('button')).toHaveCount(0);
  await expect(aliceRow.getByText('Remove', { exact: true })).toHaveCount(0);
  const other = members.filter({ hasText: world.long.username });
  await expect(other.getByRole('button', { name: `Make ${world.long.username} an owner` })).toBeVisible();
  // The schedule page's team link takes a finger.
  await ready(page, '/schedule');
  const link = page.getByRole('link', { name: 'Payments Platform Checkout Reliability Engineering' }).first();
  expect((await link.boundingBox())!.height).toBeGreaterThanOrEqual(44);
});

test('the settings form names bad values by its labels and marks them', async ({ page }) => {
  await signInPage(page);
  await ready(page, '/admin');
  await page.getByLabel('Page again every').fill('5s');
  await page.getByLabel('Expire a firing alert not heard of for').fill('soon');
  await page.getByRole('button', { name: 'Save settings' }).click();
  const error = page.getByRole('alert').filter({ hasText: 'must be between' });
  await expect(error).toContainText('“Page again every” must be between 1m and 1d');
  await expect(error).toContainText('“Expire a firing alert not heard of for”: "soon" is not a duration');
  await expect(error).not.toContainText('_');
  await expect(error).not.toContainText('Notify repeat');
  await expect(page.getByLabel('Page again every')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByLabel('Expire a firing alert not heard of for')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByLabel('Hide resolved alerts after')).not.toHaveAttribute('aria-invalid', 'true');
});

test('the first-steps card reads as sentences with whole-finger links', async ({ browser, baseURL }) => {
  const username = `newcomer-${Date.now().toString(36)}`;
  expect((await api.post('/api/users', { data: { username, password: PASSWORD } })).status()).toBe(201);
  const page = await browser.newPage({ baseURL, viewport: { width: 390, height: 844 } });
  expect((await page.request.post('/api/auth/login', { data: { username, password: PASSWORD } })).status()).toBe(200);
  await ready(page, '/');
  const card = page.getByRole('region', { name: 'First steps' });
  const steps = card.getByRole('listitem');
  await expect(steps).toHaveCount(3);
  for (const step of await steps.all()) {
    // The sentence runs the width of the card, not squeezed into a column beside its link.
    const box = (await step.boundingBox())!;
    expect(box.width).toBeGreaterThan(280);
    expect(box.height).toBeLessThan(4 * 44);
  }
  for (const link of await card.getByRole('link').all()) {
    expect((await link.boundingBox())!.height).toBeGreaterThanOrEqual(44);
  }
  expect(await brokenWords(page)).toEqual([]);
  await page.close();
});

test('what happens next calls the reader "you"', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `next-you-${suffix}` } })).json();
  let restoreTopic = async () => {};
  try {
    // Alice holds today and has a push topic: with no ladder, the holder is paged again until
    // someone acknowledges.
    const alice = (await (await request.get('/api/me')).json()).id;
    const before = (await (await request.get('/api/me')).json()).push_topic ?? '';
    expect((await request.put(`/api/users/${alice}/push-topic`, { data: { push_topic: `alice-next-${suffix}` } })).status()).toBe(200);
    restoreTopic = async () => {
      await request.put(`/api/users/${alice}/push-topic`, { data: { push_topic: before } });
    };
    expect((await request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: alice, dates: [iso(new Date(Date.now() - 86_400_000)), iso(new Date())] } })).status()).toBe(201);
    const { key } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
    const payload = alertmanagerPayload(`NextYou${suffix}`, `${suffix}nextyou`.padEnd(16, '0').slice(0, 16), 'next', 'next-1:9100', { summary: 'next' });
    expect((await request.post(`/api/alertmanager/webhook/${key}`, { data: payload })).status()).toBe(200);
    const [incident] = await (await request.get(`/api/incidents?team_id=${team.id}`)).json();
    await signInPage(page);
    await ready(page, `/incidents/${incident.id}`);
    await expect(page.locator('.next-step')).toHaveText(/^Pages you again at .* unless acknowledged$/);
  } finally {
    await restoreTopic();
    await removeTeam(request, team.id);
  }
});
