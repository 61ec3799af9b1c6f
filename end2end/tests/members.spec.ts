import { expect, type Browser, type Page } from '@playwright/test';
import { test, PASSWORD, hydrated, removeTeam, signInApi, pressSignIn } from './support';

// An existing person joins a team: an owner finds them by name in the Members list, adds them,
// changes their role and removes them (asked once); someone signed in who opens an invite link
// joins with one button. An owner who is not an administrator finds people outside their teams
// only by their exact username.

async function signInAs(page: Page, username: string, password: string) {
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/$/);
}

async function newPhone(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  return { context, page: await context.newPage() };
}

test('an owner adds an existing person, changes their role and removes them', async ({ page, request, browser }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `crew-${suffix}`, display_name: `Crew ${suffix}` } })).json();
  const bob = `bob-${suffix}`;
  const carol = `carol-${suffix}`;
  for (const name of [bob, carol]) {
    expect((await request.post('/api/users', { data: { username: name, password: `${name} password` } })).status()).toBe(201);
  }

  await signInAs(page, 'alice', PASSWORD);
  await page.goto(`/teams/${team.id}`);
  await hydrated(page);
  const members = page.getByRole('region', { name: 'Members' });
  await members.getByText('Add someone who has an account').click();
  await members.getByLabel('Name', { exact: true }).fill(`bob-${suffix.slice(0, 3)}`);
  const found = members.getByRole('list', { name: 'People found' });
  await expect(found.getByText(bob, { exact: true })).toBeVisible();
  await expect(found.getByText(carol)).toHaveCount(0);
  await found.getByRole('button', { name: `Add ${bob} as member` }).click();
  const row = members.locator('.member').filter({ hasText: bob });
  await expect(row.locator('.chip')).toHaveText('member');
  // Found again, a member is not offered twice.
  await expect(members.getByText('Nobody by that name who is not in the team already.')).toBeVisible();

  await row.getByRole('button', { name: `Make ${bob} an owner` }).click();
  await expect(row.locator('.chip')).toHaveText('owner');
  const listed = await (await request.get(`/api/teams/${team.id}/members`)).json();
  expect(listed.find((m: any) => m.username === bob).role).toBe('owner');

  // Bob, an owner but not an administrator, finds carol (in none of his teams) only by her
  // exact username.
  const phone = await newPhone(browser);
  await signInAs(phone.page, bob, `${bob} password`);
  await phone.page.goto(`/teams/${team.id}`);
  await hydrated(phone.page);
  const his = phone.page.getByRole('region', { name: 'Members' });
  await his.getByText('Add someone who has an account').click();
  await his.getByLabel('Name', { exact: true }).fill('carol-');
  await expect(his.getByText('Nobody by that name who is not in the team already.')).toBeVisible();
  await his.getByLabel('Name', { exact: true }).fill(carol);
  await expect(his.getByRole('list', { name: 'People found' }).getByText(carol, { exact: true })).toBeVisible();
  await phone.context.close();

  // Removing asks once.
  await row.getByText('Remove', { exact: true }).click();
  await row.getByRole('button', { name: `Remove ${bob} from the team` }).click();
  await expect(members.locator('.member').filter({ hasText: bob })).toHaveCount(0);
  const after = await (await request.get(`/api/teams/${team.id}/members`)).json();
  expect(after.map((m: any) => m.username)).toEqual(['alice']);
  await removeTeam(request, team.id);
});

test('someone signed in joins a team from an invite link with one button', async ({ request, browser }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `join-${suffix}`, display_name: `Join ${suffix}` } })).json();
  const dan = `dan-${suffix}`;
  expect((await request.post('/api/users', { data: { username: dan, password: `${dan} password` } })).status()).toBe(201);
  const invite = await (await request.post(`/api/teams/${team.id}/invites`, { data: { role: 'member', max_uses: 2 } })).json();

  // Signed out, the link offers an account, and signing in comes back to it.
  const phone = await newPhone(browser);
  await phone.page.goto(`/signup?invite=${invite.token}`);
  await expect(phone.page.getByRole('button', { name: 'Create account' })).toBeVisible();
  await phone.page.getByRole('link', { name: 'Sign in' }).click();
  await phone.page.getByLabel('Username').fill(dan);
  await phone.page.getByLabel('Password', { exact: true }).fill(`${dan} password`);
  await phone.page.getByRole('button', { name: 'Sign in' }).click();
  await expect(phone.page).toHaveURL(/\/signup\?invite=/);
  await expect(phone.page.getByText(`You are signed in as ${dan}.`)).toBeVisible();
  await expect(phone.page.getByRole('button', { name: 'Create account' })).toHaveCount(0);
  await phone.page.getByRole('button', { name: `Join Join ${suffix} as member` }).click();
  await expect(phone.page).toHaveURL(new RegExp(`/teams/${team.id}$`));
  await expect(phone.page.getByRole('region', { name: 'Members' }).getByText(dan, { exact: true })).toBeVisible();
  const links = await (await request.get(`/api/teams/${team.id}/invites`)).json();
  expect(links[0].uses).toBe(1);

  // Again: already a member, said plainly, and the use is not counted.
  await phone.page.goto(`/signup?invite=${invite.token}`);
  await phone.page.getByRole('button', { name: `Join Join ${suffix} as member` }).click();
  await expect(phone.page.getByRole('alert').filter({ hasText: 'already a member' })).toBeVisible();
  expect((await (await request.get(`/api/teams/${team.id}/invites`)).json())[0].uses).toBe(1);
  await phone.context.close();
  await removeTeam(request, team.id);
});
