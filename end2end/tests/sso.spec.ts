import { test, expect } from '@playwright/test';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hydrated, signInApi } from './support';

// Single sign-on in Chromium through the real provider the config starts (oidc/provider.mjs):
// a responder runs `klaxon login` at a laptop, opens the link on the phone, signs in with the
// company's identity provider, approves the code, and the terminal is signed in as them. The
// team the provider's group maps to shows on their profile as a grant from the provider.

const here = path.dirname(fileURLToPath(import.meta.url));
const targetDir = process.env.CARGO_TARGET_DIR
  ? path.resolve(process.env.CARGO_TARGET_DIR)
  : path.join(here, '..', '..', 'target');
const binary = path.join(targetDir, 'release', 'klaxon');

test('a responder signs in through the identity provider and approves klaxon login', async ({ page, request, baseURL }) => {
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

  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-cli-'));
  const env = { ...process.env, XDG_CONFIG_HOME: config };
  const login = spawn(binary, ['login', '--server', baseURL!], { env });
  let out = '';
  login.stdout.on('data', (d) => (out += d.toString()));
  login.stderr.on('data', (d) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => login.on('exit', resolve));
  await expect.poll(() => out, { timeout: 10_000 }).toMatch(/\/device\?code=[A-Z0-9]{4}-[A-Z0-9]{4}/);
  const link = out.match(/http\S+\/device\?code=\S+/)![0];
  const code = out.match(/shows the code (\S+)/)![1];

  // Signed out, the link goes to the sign-in page, whose provider button goes through the
  // provider's own login and consent pages and comes back to the code.
  await page.goto(link);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await expect(page).toHaveURL(/127\.0\.0\.1:18081\/interaction\//);
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
  expect(out).toContain('Signed in as sam');
  const whoami = execFileSync(binary, ['whoami'], { env }).toString();
  expect(whoami).toContain(`sam at ${baseURL}`);
  execFileSync(binary, ['logout'], { env });
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
