import { expect } from '@playwright/test';
import { test, PASSWORD, hydrated, removeTeam, signInApi, pressSignIn } from './support';

// The team's time on a phone: an owner previews moving the team's days to New York at 19:00,
// sees what it would do before saving, saves it; then a cover is made from the calendar
// ("bob has the pager 14:00–18:00 tomorrow while alice is out"), in the team's time, shown on
// the calendar and in the list of covers, and removed again.

const ZONE = 'America/New_York';
// The phone is in Berlin: times of the team's are shown in Berlin time alongside.
const VIEWER = 'Europe/Berlin';
test.use({ timezoneId: VIEWER });

/// The date `days` from now on the team's clock, as `YYYY-MM-DD`.
function teamDate(days: number) {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' })
    .format(new Date(Date.now() + days * 86_400_000));
  return parts; // en-CA writes YYYY-MM-DD
}

/// An instant's wall-clock time in a zone, `HH:MM`.
function timeIn(iso: string, timeZone = ZONE) {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    .format(new Date(iso));
}

test('the team zone is previewed and saved, and a cover is made from the calendar', async ({ page, request }) => {
  test.setTimeout(90_000);
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `tz-${suffix}` } })).json();
  const bob = `bob-${suffix}`;
  const user = await request.post('/api/users', { data: { username: bob, password: 'bob password' } });
  expect(user.status()).toBe(201);
  const bobId = (await user.json()).id;
  expect((await request.post(`/api/teams/${team.id}/members`, { data: { user_id: bobId } })).status()).toBe(201);
  // alice holds every date around now, whichever way the zone turns them.
  const me = await (await request.get('/api/me')).json();
  const dates = [-2, -1, 0, 1, 2, 3].map((d) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10));
  expect((await request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: me.id, dates } })).status()).toBe(201);

  await page.goto('/login');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/$/);
  await page.goto(`/teams/${team.id}`);
  await hydrated(page);
  const schedule = page.getByRole('region', { name: 'On call' });
  await expect(schedule.locator('#oncall-day-summary')).toHaveText('Days run 00:00–00:00 UTC time.');

  // A zone the database does not know is refused where it was typed.
  await schedule.getByText('Time zone and hand-off').click();
  await schedule.getByLabel('Time zone').fill('Mars/Olympus');
  await schedule.getByLabel('Hand-off time').fill('19:00');
  await schedule.getByRole('button', { name: 'Preview' }).click();
  await expect(schedule.getByRole('alert').filter({ hasText: 'Mars/Olympus' })).toContainText('time zone database');

  // The preview says what would happen; nothing is stored until Save.
  await schedule.getByLabel('Time zone').fill(ZONE);
  await schedule.getByRole('button', { name: 'Preview' }).click();
  const preview = schedule.locator('#day-preview');
  await expect(preview).toContainText(`${ZONE} time, days run 19:00–19:00. Every date keeps its holder.`);
  await expect(preview).toContainText(/^From \w+day \d+ \w+ 19:00 /);
  expect((await (await request.get(`/api/teams/${team.id}/on-call-day`)).json()).time_zone).toBe('UTC');
  await schedule.getByRole('button', { name: 'Save' }).click();
  await expect(schedule.getByText('Saved.')).toBeVisible();
  const day = await (await request.get(`/api/teams/${team.id}/on-call-day`)).json();
  expect([day.time_zone, day.handoff_time]).toEqual([ZONE, '19:00']);
  await expect(schedule.locator('#oncall-day-summary')).toHaveText(day.summary);

  // bob covers for whoever is on call, 14:00–18:00 tomorrow on the team's clock.
  const date = teamDate(1);
  await schedule.getByText('Cover part of a day').click();
  await schedule.getByLabel('Who has the pager').selectOption({ label: bob });
  await schedule.getByLabel('For', { exact: true }).selectOption({ label: 'Whoever is on call then' });
  await schedule.getByLabel('From').fill(`${date}T14:00`);
  await schedule.getByLabel('Until').fill(`${date}T18:00`);
  await schedule.getByRole('button', { name: 'Cover', exact: true }).click();
  await expect(schedule.getByText('Covered.')).toBeVisible();
  const covers = schedule.getByRole('list', { name: 'Covers' });
  await expect(covers).toContainText(`${bob} covers for alice,`);
  await expect(covers).toContainText(`14:00 to 18:00 (${ZONE})`);
  const [made] = await (await request.get(`/api/teams/${team.id}/covers`)).json();
  expect([timeIn(made.starts_at), timeIn(made.ends_at)]).toEqual(['14:00', '18:00']);
  expect(made.covered_username).toBe('alice');
  // The viewer's own time alongside, from the zone the browser reported.
  await expect(covers).toContainText(
    new RegExp(`Your time: \\S+ ${timeIn(made.starts_at, VIEWER)} ${VIEWER} to \\S+ ${timeIn(made.ends_at, VIEWER)} ${VIEWER}\\.`),
  );

  // The calendar of that month marks the date.
  await page.goto(`/teams/${team.id}?month=${date.slice(0, 7)}`);
  await hydrated(page);
  const cell = page.locator('table.calendar').getByRole('link', { name: new RegExp(`${bob} 14:00–18:00`) });
  await expect(cell).toHaveCount(1);
  await expect(cell.locator('.day')).toHaveText(String(Number(date.slice(8, 10))));

  // Removed before it starts, it is gone.
  await covers.getByText('Remove', { exact: true }).click();
  await covers.getByRole('button', { name: 'Yes, remove the cover' }).click();
  await expect(page.getByRole('list', { name: 'Covers' })).toHaveCount(0);
  expect(await (await request.get(`/api/teams/${team.id}/covers`)).json()).toEqual([]);

  await removeTeam(request, team.id);
});
