import { chromium } from '@playwright/test';
const base = 'http://127.0.0.1:18090';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
for (const scheme of ['dark', 'light']) {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: scheme, baseURL: base });
  const page = await ctx.newPage();
  page.on('response', (r) => { if (r.status() >= 400) console.log('HTTP', r.status(), r.url()); });
  page.on('console', (m) => { if (m.type() === 'error') console.log('console:', m.text()); });
  await page.goto('/login');
  await page.screenshot({ path: `/tmp/shot-${scheme}-login-bootstrap.png` });
  if (scheme === 'dark') {
    const r = await ctx.request.post('/api/bootstrap', { data: { username: 'alice', password: 'correct horse battery' } });
    console.log('bootstrap', r.status());
  }
  await page.goto('/login');
  await page.locator('[data-hydrated="true"]').waitFor({ state: 'attached' });
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill('nope nope nope');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Wrong' }).waitFor();
  await page.screenshot({ path: `/tmp/shot-${scheme}-login-error.png` });
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'My teams' }).waitFor();
  if (scheme === 'dark') {
    await page.getByText('Create a team').click();
    await page.getByLabel('Name', { exact: true }).fill('Bad Name!');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('alert').filter({ hasText: /name/i }).waitFor();
    await page.screenshot({ path: `/tmp/shot-${scheme}-home-error.png`, fullPage: true });
    await page.getByLabel('Name', { exact: true }).fill('payments');
    await page.getByLabel('Display name').fill('Payments on call');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('link', { name: /Payments on call/ }).waitFor();
  }
  await page.screenshot({ path: `/tmp/shot-${scheme}-home.png`, fullPage: true });
  await page.getByRole('link', { name: /Payments on call/ }).click();
  await page.getByRole('heading', { name: 'Members' }).waitFor();
  await page.screenshot({ path: `/tmp/shot-${scheme}-team.png` });
  await page.goto('/me');
  await page.locator('[data-hydrated="true"]').waitFor({ state: 'attached' });
  await page.getByLabel('Key name').fill('laptop-' + scheme);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByText('it will not be shown again').waitFor();
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.screenshot({ path: `/tmp/shot-${scheme}-me.png`, fullPage: true });
  await page.goto('/nowhere/at/all');
  await page.screenshot({ path: `/tmp/shot-${scheme}-404.png` });
  await page.goto('/admin');
  await page.screenshot({ path: `/tmp/shot-${scheme}-admin.png` });
  await ctx.close();
}
await browser.close();
