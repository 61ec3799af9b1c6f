import { test, expect } from '@playwright/test';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PASSWORD, hydrated, signInApi } from './support';

// A responder signs a terminal in: `klaxon login` (the release binary, as a child process)
// prints a link and a code; a signed-out phone opens the link, signs in, approves the code, and
// the terminal is signed in as that person, its session kept in a file only they can read.

const here = path.dirname(fileURLToPath(import.meta.url));
const targetDir = process.env.CARGO_TARGET_DIR
  ? path.resolve(process.env.CARGO_TARGET_DIR)
  : path.join(here, '..', '..', 'target');
const binary = path.join(targetDir, 'release', 'klaxon');

test('a code from klaxon login is approved on the phone and signs the terminal in', async ({ page, request, baseURL }) => {
  await signInApi(request);
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
  expect(link).toContain(code);

  // Signed out, the link goes through sign-in and comes back.
  await page.goto(link);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/device\?code=/);
  await expect(page.getByLabel('Code shown in the terminal')).toHaveValue(code);
  await hydrated(page);
  await expect(page.getByText('A terminal asks to act as alice.', { exact: false })).toBeVisible();
  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByText('Approved: the terminal is signed in as you.')).toBeVisible();

  expect(await exited).toBe(0);
  expect(out).toContain('Signed in as alice');
  const credentials = path.join(config, 'klaxon', 'credentials');
  expect(fs.statSync(credentials).mode & 0o777).toBe(0o600);
  const whoami = execFileSync(binary, ['whoami'], { env }).toString();
  expect(whoami).toContain(`alice at ${baseURL}`);
  const listed = execFileSync(binary, ['incidents'], { env }).toString();
  expect(listed.length).toBeGreaterThan(0);
  execFileSync(binary, ['logout'], { env });
  expect(fs.existsSync(credentials)).toBe(false);
  fs.rmSync(config, { recursive: true, force: true });
});
