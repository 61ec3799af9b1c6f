import { expect } from '@playwright/test';
import { test, hydrated, removeTeam, signInApi, signInPage } from './support';

// The team page's "Export as file" downloads the team's set-up as the YAML `klaxon apply` reads,
// before and after the wasm arrives.

test('a team page exports the team as a file', async ({ page, request }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `file-${suffix}`, display_name: `File ${suffix}` } })).json();
  expect((await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prod', kind: 'alertmanager' } })).status()).toBe(201);
  await signInPage(page);
  await page.goto(`/teams/${team.id}`);
  await hydrated(page);
  const link = page.getByRole('link', { name: 'Export as file' });
  await expect(link).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  expect(download.suggestedFilename()).toBe(`file-${suffix}.yaml`);
  const text = await (await import('node:fs')).promises.readFile(await download.path(), 'utf8');
  expect(text).toContain('apiVersion: klaxon.dev/v1alpha1');
  expect(text).toContain(`- name: file-${suffix}`);
  expect(text).toContain('kind: alertmanager');
  // The page stayed where it was.
  await expect(page).toHaveURL(new RegExp(`/teams/${team.id}$`));
  await removeTeam(request, team.id);
});
