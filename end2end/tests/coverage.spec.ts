import { expect, type Page } from '@playwright/test';
import { test, hydrated, removeTeam, signInApi, signInPage } from './support';

// Coverage is never silently missing: the incident list, the team page and the schedule page say
// when nobody is on call within the next 14 days, with a link that opens the form to fill it;
// calendar days are tappable to give that day, and names on the calendar are not cut short.

const iso = (d: Date) => d.toISOString().slice(0, 10);
const plusDays = (n: number) => new Date(Date.now() + n * 86_400_000);
const longDay = (d: Date) =>
  d.toLocaleDateString('en-GB', { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' }).replace(',', '');

for (const scheme of ['dark', 'light'] as const) {
  test(`a gap in the rota is shown where people look, and filled from there (${scheme})`, async ({ page, request }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await signInApi(request);
    const me = await (await request.get('/api/me')).json();
    const suffix = Date.now().toString(36);
    const name = `Cover ${suffix}`;
    const team = await (await request.post('/api/teams', { data: { name: `cover-${suffix}`, display_name: name } })).json();
    // Alice holds today and the next two days (the team is on UTC); the fourth day is the gap.
    const held = [0, 1, 2].map((n) => iso(plusDays(n)));
    expect((await request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: me.id, dates: held } })).status()).toBe(201);
    const gap = plusDays(3);
    const words = `Nobody is on call for ${name} from ${longDay(gap)}`;

    await signInPage(page);
    await hydrated(page);
    const onList = page.locator('.coverage-gap').filter({ hasText: name });
    await expect(onList).toHaveText(`${words}. Fill it`);
    // After the open incidents, never above them.
    await page.goto('/schedule');
    await expect(page.locator('.coverage-gap').filter({ hasText: name })).toHaveText(`${words}. Fill it`);
    await page.goto(`/teams/${team.id}`);
    await hydrated(page);
    const onTeam = page.locator('.coverage-gap');
    await expect(onTeam).toHaveText(`${words}. Fill it`);

    // "Fill it" opens the form with the date in it.
    await onTeam.getByRole('link', { name: 'Fill it' }).click();
    await expect(page).toHaveURL(new RegExp(`fill=${iso(gap)}#give-days$`));
    await expect(page.locator('#give-days')).toHaveAttribute('open', '');
    await expect(page.getByLabel('First day')).toHaveValue(iso(gap));
    await page.getByLabel('Last day').fill(iso(plusDays(20)));
    await page.getByRole('button', { name: 'Give days' }).click();
    await expect(page.getByText('Given.', { exact: true })).toBeVisible();
    // A form that succeeded closes and clears.
    await expect(page.locator('#give-days')).not.toHaveAttribute('open', '');
    await expect(page.getByLabel('Last day')).toHaveValue('');
    await page.goto(`/teams/${team.id}`);
    await expect(page.locator('.coverage-gap')).toHaveCount(0);

    // A calendar day is a link that gives that day; the name on it is whole.
    const cell = page.getByRole('link', { name: /^\d+ alice\b.*\. Give this day$/ }).first();
    await expect(cell.locator('.holder')).toHaveText('alice');
    const cut = await cell.locator('.holder').evaluate((e) => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1);
    expect(cut).toBe(false);
    await cell.click();
    await expect(page).toHaveURL(/fill=\d{4}-\d\d-\d\d#give-days$/);
    await expect(page.locator('#give-days')).toHaveAttribute('open', '');
    await removeTeam(request, team.id);
  });
}

test('the calendar links the schedule for a calendar app, shown once with a copy button', async ({ page, request, context }) => {
  await signInApi(request);
  const me = await (await request.get('/api/me')).json();
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `feed-${suffix}`, display_name: `Feed ${suffix}` } })).json();
  expect((await request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: me.id, dates: [iso(plusDays(1))] } })).status()).toBe(201);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signInPage(page);
  await page.goto(`/teams/${team.id}`);
  await hydrated(page);
  await page.getByText('Add to your calendar app').click();
  await page.getByRole('button', { name: 'Make a calendar link' }).click();
  const field = page.getByLabel('Your calendar link');
  await expect(field).toHaveValue(/\/api\/calendar\/[A-Za-z0-9]{64}\/schedule\.ics$/);
  const link = await field.inputValue();
  await page.locator('#calendar-link').getByRole('button', { name: 'Copy' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
  await expect(page.locator('.calendar-made')).toContainText('You made a link');
  // A calendar app fetches it with no session and no key.
  const feed = await (await fetch(link)).text();
  expect(feed).toContain('BEGIN:VCALENDAR');
  expect(feed).toContain(`Feed ${suffix}`);
  // After a reload the link is not shown again; stopping it ends it.
  await page.reload();
  await page.getByText('Add to your calendar app').click();
  await expect(page.getByLabel('Your calendar link')).toHaveCount(0);
  await page.getByRole('button', { name: 'Stop the link' }).click();
  await expect(page.locator('.calendar-made')).toHaveCount(0);
  expect((await fetch(link)).status).toBe(404);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
  await removeTeam(request, team.id);
});
