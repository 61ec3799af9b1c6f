import { expect } from '@playwright/test';
import { test, PASSWORD, hydrated, removeTeam, signInApi, pressSignIn } from './support';

// The rota on a phone: an owner makes a rotation, previews filling four weeks with it and applies
// it; a teammate offers one of the dates from elsewhere, it appears without a reload, and the
// owner takes it with one tap; then the owner turns hand-off notices on.

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/// The UTC date `days` from today, as `YYYY-MM-DD` and as the app shows it ("Sun 22 Nov").
function dayFromToday(days: number) {
  const d = new Date(Date.now() + days * 86_400_000);
  return {
    iso: d.toISOString().slice(0, 10),
    label: `${DAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`,
  };
}

test('a rotation is previewed and applied, and an offered date is taken', async ({ page, request, playwright, baseURL }) => {
  test.setTimeout(90_000);
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `rota-${suffix}` } })).json();
  const bob = `bob-${suffix}`;
  const user = await request.post('/api/users', { data: { username: bob, password: 'bob password' } });
  expect(user.status()).toBe(201);
  const added = await request.post(`/api/teams/${team.id}/members`, { data: { user_id: (await user.json()).id } });
  expect(added.status()).toBe(201);

  await page.goto(`/teams/${team.id}/rota`);
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(new RegExp(`/teams/${team.id}/rota$`));
  await hydrated(page);
  await expect(page.getByRole('heading', { name: 'Rota', level: 1 })).toBeVisible();
  await expect(page.getByText('Nobody is on call today.')).toBeVisible();

  // A rotation of alice and bob, a week each from today. An unknown name is refused first.
  const rotations = page.getByRole('region', { name: 'Rotations' });
  await rotations.getByText('New rotation').click();
  await expect(rotations.getByLabel('Turns, in order')).toHaveValue(new RegExp(`alice, ${bob}|${bob}, alice`));
  await rotations.getByLabel('Turns, in order').fill('alice, nobody');
  await rotations.getByRole('button', { name: 'Make rotation' }).click();
  await expect(rotations.getByRole('alert').filter({ hasText: 'nobody' })).toHaveText(
    'No member of the team is called "nobody".',
  );
  await rotations.getByLabel('Turns, in order').fill(`alice, ${bob}`);
  await rotations.getByRole('button', { name: 'Make rotation' }).click();
  const row = rotations.locator('li.rotation').filter({ hasText: 'Weekly' });
  await expect(row).toContainText(`alice → ${bob}`);
  await expect(row).toContainText(`7 days each, from ${dayFromToday(0).label}`);

  // Preview four weeks: nothing is stored until the owner applies.
  await row.getByText('Fill dates with Weekly').click();
  await row.getByRole('button', { name: 'Preview' }).click();
  const result = rotations.locator('.fill-result');
  await expect(result.getByRole('heading', { name: 'Preview: 28 dates' })).toBeVisible();
  await expect(result.locator('li').nth(7)).toContainText(`${dayFromToday(7).label}${bob}`);
  const before = await (await request.get(`/api/teams/${team.id}/schedule`)).json();
  expect(before).toEqual([]);
  await result.getByRole('button', { name: 'Apply 28 dates' }).click();
  await expect(result).toContainText('Filled 28 dates.');
  await expect(page.getByText('You are on call today.')).toBeVisible();
  const changes = page.getByRole('region', { name: 'Recent changes' });
  await expect(changes).toContainText(`Weekly filled 28 dates, ${dayFromToday(0).iso} to ${dayFromToday(27).iso}`);
  const filled = await (await request.get(`/api/teams/${team.id}/schedule`)).json();
  expect(filled.length).toBe(28);

  // Bob offers his first date from his own phone; it shows on alice's page without a reload.
  await page.evaluate(() => ((window as any).klaxonMark = 'not reloaded'));
  const bobApi = await playwright.request.newContext({ baseURL });
  expect((await bobApi.post('/api/auth/login', { data: { username: bob, password: 'bob password' } })).status()).toBe(200);
  const swap = dayFromToday(7);
  expect((await bobApi.post(`/api/teams/${team.id}/schedule/${swap.iso}/offer`)).status()).toBe(200);
  const open = page.getByRole('region', { name: 'Up for grabs' });
  await expect(open.locator('li')).toContainText(`${swap.label}offered by ${bob}`, { timeout: 10_000 });
  expect(await page.evaluate(() => (window as any).klaxonMark)).toBe('not reloaded');

  await open.getByRole('button', { name: `Take ${swap.label}` }).click();
  await expect(open.getByRole('status')).toHaveText('Taken: that date is yours.');
  await expect(open.getByText('No dates are offered.')).toBeVisible();
  await expect(page.getByRole('region', { name: 'Your dates' }).locator('li').filter({ hasText: swap.label })).toBeVisible();
  await expect(changes).toContainText(`alice took ${swap.iso} from ${bob}`);
  const entry = (await (await request.get(`/api/teams/${team.id}/schedule?from=${swap.iso}&to=${swap.iso}`)).json())[0];
  expect(entry.username).toBe('alice');

  // Hand-off notices: off until the owner turns them on; they go at the team's hand-off.
  const handoff = page.getByRole('region', { name: 'Hand-off notices' });
  await expect(handoff).toContainText('Off.');
  await handoff.getByText('Change', { exact: true }).click();
  await handoff.getByLabel('Send hand-off notices').check();
  await handoff.getByRole('button', { name: 'Save' }).click();
  await expect(handoff).toContainText('On: at each hand-off (00:00 UTC time)');
  expect(await (await request.get(`/api/teams/${team.id}/handoff`)).json()).toEqual({
    enabled: true,
    at: '00:00',
    time_zone: 'UTC',
  });

  await bobApi.dispose();
  await removeTeam(request, team.id);
});
