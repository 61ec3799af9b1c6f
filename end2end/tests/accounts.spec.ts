import { expect } from '@playwright/test';
import { test, PASSWORD, alertmanagerPayload, hydrated, signInApi, pressSignIn } from './support';

// Growing a team from the phone: an owner makes an invite link on one phone, a second phone
// signs up through it and lands on the team's incidents; an administrator disables a user from
// the console and that user's open session is refused on its next request.

test('an invite link made on one phone brings a new person onto the team from another', async ({ browser, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await request.post('/api/teams', { data: { name: `checkout-${suffix}`, display_name: `Checkout ${suffix}` } });
  expect(team.status()).toBe(201);
  const teamId = (await team.json()).id;
  const integration = await request.post(`/api/teams/${teamId}/integrations`, { data: { name: 'prom' } });
  const { key } = await integration.json();
  const alertname = `CartErrors${suffix}`;
  const hook = await request.post(`/api/alertmanager/webhook/${key}`, {
    data: alertmanagerPayload(alertname, `${suffix}cafe`.slice(0, 16), 'cart', 'cart-1:8080', { summary: 'Cart errors' }),
  });
  expect(hook.status()).toBe(200);

  // The owner's phone: sign in, open the team, make a link for two people.
  const owner = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const ownerPage = await owner.newPage();
  await ownerPage.goto('/login');
  await ownerPage.getByLabel('Username').fill('alice');
  await ownerPage.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(ownerPage);
  await expect(ownerPage).toHaveURL(/\/$/);
  await ownerPage.goto(`/teams/${teamId}`);
  await hydrated(ownerPage);
  await ownerPage.getByText('Make an invite link').click();
  await ownerPage.getByLabel('How many people may use it').fill('2');
  await ownerPage.getByRole('button', { name: 'Make link' }).click();
  const field = ownerPage.getByLabel(/^Invite link for 2 people/);
  await expect(field).toHaveValue(/\/signup\?invite=[A-Za-z0-9]{64}$/);
  await expect(ownerPage.getByLabel('QR code of the invite link').locator('svg')).toBeVisible();
  const link = await field.inputValue();
  await expect(ownerPage.getByRole('list').filter({ hasText: 'used 0 of 2' })).toBeVisible();

  // The new person's phone: no account, no session.
  const newcomer = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await newcomer.newPage();
  await page.goto(link);
  await expect(page.getByRole('heading', { name: `Join Checkout ${suffix}` })).toBeVisible();
  await page.getByLabel('Username').fill(`bea-${suffix}`);
  await page.getByLabel('Password', { exact: true }).fill('a long new password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole('heading', { name: 'Incidents', level: 1 })).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(alertname) })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'First steps' })).toBeVisible();

  // The owner sees the use counted.
  await ownerPage.reload();
  await expect(ownerPage.getByText('used 1 of 2')).toBeVisible();

  // A link that cannot be used says so in one sentence and offers no form.
  await page.goto('/signup?invite=' + 'x'.repeat(64));
  await expect(page.getByText('This invite link cannot be used. Ask a team owner for a new one.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Create account' })).toHaveCount(0);
  await owner.close();
  await newcomer.close();

  // Leave alice's incident list as it was for the other tests.
  const open = await request.get(`/api/incidents?team_id=${teamId}&state=open`);
  for (const incident of await open.json()) {
    expect((await request.post(`/api/incidents/${incident.id}/resolve`, { data: {} })).status()).toBe(200);
  }
});

test('the admin console disables a user and their open session ends', async ({ browser, page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const name = `carl-${suffix}`;
  const created = await request.post('/api/users', { data: { username: name, password: 'carl password' } });
  expect(created.status()).toBe(201);

  // Carl is signed in on his own phone.
  const carl = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const carlPage = await carl.newPage();
  await carlPage.goto('/login');
  await carlPage.getByLabel('Username').fill(name);
  await carlPage.getByLabel('Password', { exact: true }).fill('carl password');
  await pressSignIn(carlPage);
  await expect(carlPage).toHaveURL(/\/$/);

  // The administrator disables him from the console.
  await page.goto('/login');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/$/);
  await page.goto('/admin');
  await hydrated(page);
  await expect(page.getByRole('heading', { name: 'Users' })).toBeVisible();
  await page.getByRole('button', { name: `Disable ${name}` }).click();
  await expect(page.getByRole('button', { name: `Enable ${name}` })).toBeVisible();

  // Refusals are explained: alice cannot disable herself.
  await page.getByRole('button', { name: 'Disable alice' }).click();
  await expect(page.getByText('You cannot disable your own account.')).toBeVisible();

  // Carl's next request is refused: his page goes back to sign-in.
  await carlPage.goto('/');
  await expect(carlPage).toHaveURL(/\/login/);
  const me = await carl.request.get('/api/me');
  expect(me.status()).toBe(401);
  await carl.close();
});
