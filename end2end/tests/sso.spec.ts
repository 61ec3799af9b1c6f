import { expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test, hydrated, klaxonBinary, signInApi, startTerminalLogin } from './support';

// Single sign-on in Chromium through the real provider each worker starts (oidc/provider.mjs):
// a responder runs `klaxon login` at a laptop, opens the link on the phone, signs in with the
// company's identity provider, approves the code, and the terminal is signed in as them. The
// team the provider's group maps to shows on their profile as a grant from the provider.

test('a responder signs in through the identity provider and approves klaxon login', async ({ page, request, baseURL, idpIssuer }) => {
  // An administrator maps the provider's payments-oncall group to a team.
  await signInApi(request);
  let team = await request.post('/api/teams', { data: { name: 'payments-sso', display_name: 'Payments (SSO)' } });
  if (team.status() === 409) {
    const found = await request.get('/api/teams?name=payments-sso');
    team = found;
  }
  const teamBody = await team.json();
  const teamId = Array.isArray(teamBody) ? teamBody[0].id : teamBody.id;
  const mapped = await request.put(`/api/teams/${teamId}/oidc`, {
    data: { member_groups: ['payments-oncall'], owner_groups: [] },
  });
  expect(mapped.status()).toBe(200);

  const { config, env, exited, output, link, code } = await startTerminalLogin(baseURL!);

  // Signed out, the link goes to the sign-in page, whose provider button goes through the
  // provider's own login and consent pages and comes back to the code.
  await page.goto(link);
  await expect(page).toHaveURL(/\/login\?next=/);
  // Once the page is interactive, as a person half awake would find it.
  await hydrated(page);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await expect(page).toHaveURL(new RegExp(`^${idpIssuer}/interaction/`));
  await page.locator('input[name="login"]').fill('sam');
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/device\?code=/);
  await expect(page.getByLabel('Code shown in the terminal')).toHaveValue(code);
  await hydrated(page);
  await expect(page.getByText('A terminal asks to act as sam.', { exact: false })).toBeVisible();
  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByText('Approved: the terminal is signed in as you.')).toBeVisible();

  expect(await exited).toBe(0);
  expect(output()).toContain('Signed in as sam');
  const whoami = execFileSync(klaxonBinary, ['whoami'], { env }).toString();
  expect(whoami).toContain(`sam at ${baseURL}`);
  execFileSync(klaxonBinary, ['logout'], { env });
  fs.rmSync(config, { recursive: true, force: true });

  // The profile says how the account is managed and what the provider grants.
  await page.goto('/me');
  const managed = page.getByRole('region', { name: 'Single sign-on' });
  await expect(managed).toContainText("You sign in through your organisation's identity provider.");
  await expect(managed.getByRole('listitem')).toHaveText(['Payments (SSO) (member)']);
});

test('a refused single sign-on comes back to the sign-in page with a sentence', async ({ page }) => {
  await page.goto('/login?sso_error=not_allowed');
  await expect(page.getByRole('alert')).toContainText('not in a group allowed to use Klaxon');
  await expect(page.getByRole('link', { name: 'Sign in with Test IdP' })).toBeVisible();
  await expect(page.getByLabel('Username')).toBeVisible();
});
