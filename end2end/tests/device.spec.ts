import { expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, PASSWORD, hydrated, klaxonBinary, signInApi, startTerminalLogin, pressSignIn } from './support';

// A responder signs a terminal in: `klaxon login` (the release binary, as a child process)
// prints a link and a code; a signed-out phone opens the link, signs in, approves the code, and
// the terminal is signed in as that person, its session kept in a file only they can read.


test('a code from klaxon login is approved on the phone and signs the terminal in', async ({ page, request, baseURL }) => {
  await signInApi(request);
  const { config, env, exited, output, link, code } = await startTerminalLogin(baseURL!);
  expect(link).toContain(code);

  // Signed out, the link goes through sign-in and comes back.
  await page.goto(link);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(/\/device\?code=/);
  await expect(page.getByLabel('Code shown in the terminal')).toHaveValue(code);
  await hydrated(page);
  await expect(page.getByText('A terminal asks to act as alice.', { exact: false })).toBeVisible();
  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByText('Approved: the terminal is signed in as you.')).toBeVisible();

  expect(await exited).toBe(0);
  expect(output()).toContain('Signed in as alice');
  const credentials = path.join(config, 'klaxon', 'credentials');
  expect(fs.statSync(credentials).mode & 0o777).toBe(0o600);
  const whoami = execFileSync(klaxonBinary, ['whoami'], { env }).toString();
  expect(whoami).toContain(`alice at ${baseURL}`);
  const listed = execFileSync(klaxonBinary, ['incidents'], { env }).toString();
  expect(listed.length).toBeGreaterThan(0);
  execFileSync(klaxonBinary, ['logout'], { env });
  expect(fs.existsSync(credentials)).toBe(false);
  fs.rmSync(config, { recursive: true, force: true });
});
