import { expect } from '@playwright/test';
import { test, PASSWORD, hydrated, liveOpened, removeTeam, teamWithIncident } from './support';

// Light: the incident list, where a responder starts, needs only the main wasm. Every other page
// brings its code in a chunk of its own the first time it is shown (Leptos lazy routes), on a
// full load and on a move inside the app alike, and is taken over with it: controls work and the
// browser reports no error.

test('the incident list loads no page chunk; other pages load theirs and hydrate', async ({ page }) => {
  const { teamId, alertname, incidentId } = await teamWithIncident(page.request, 'light', 'Chunk');
  // Signed in through the page's own context, so the first page it opens is a first visit.
  const login = await page.request.post('/api/auth/login', { data: { username: 'alice', password: PASSWORD } });
  expect(login.status()).toBe(200);

  const wasm: string[] = [];
  page.on('request', (r) => {
    const file = new URL(r.url()).pathname.split('/').pop()!;
    if (file.endsWith('.wasm')) wasm.push(file);
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });

  await page.goto('/');
  await hydrated(page);
  expect(wasm).toEqual(['klaxon.wasm']);

  // Into an incident inside the app: its chunk arrives and its controls work.
  await page.getByRole('link', { name: new RegExp(alertname) }).click();
  await expect(page).toHaveURL(new RegExp(`/incidents/${incidentId}$`));
  await page.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(page.locator('.incident-head .state')).toHaveText('acknowledged');
  const afterIncident = wasm.length;
  expect(afterIncident).toBeGreaterThan(1);

  // A page's response names its chunk's files, for the browser to fetch beside the main wasm.
  const links = (await page.request.get(`/incidents/${incidentId}`)).headers()['link'] ?? '';
  expect(links).toMatch(/<\/pkg\/[0-9a-f]{16}\/split_incident_chunk_\d+\.wasm>; rel=preload; as=fetch; crossorigin/);
  expect(links).not.toContain('other_chunk');
  expect(links.match(/split_incident_chunk/g)).toHaveLength(1);

  // A page opened directly (as from a bookmark) hydrates with its chunk.
  await page.goto(`/teams/${teamId}`);
  await hydrated(page);
  expect(wasm.slice(afterIncident)).toContain('klaxon.wasm');
  expect(wasm.length).toBeGreaterThan(afterIncident + 1);
  await page.getByRole('region', { name: "Dead man's switches" }).getByText('Add a switch').click();
  await expect(page.getByLabel('Heartbeat matcher')).toBeVisible();

  expect(errors).toEqual([]);
  await removeTeam(page.request, teamId);
});

// Nothing on an incident's page moves when it becomes interactive: a thumb aimed at a button as
// the page hydrates must land on that button (the "Live" line keeps its place from the first paint).
test("an incident's controls do not move when its page becomes interactive", async ({ page }) => {
  const { teamId, incidentId } = await teamWithIncident(page.request, 'steady', 'Steady');
  // Where the controls were drawn from the server's page, before any script of the app ran.
  await page.addInitScript(() => {
    document.addEventListener('DOMContentLoaded', () => {
      (window as any).controlsAt = document.querySelector('section.controls')?.getBoundingClientRect().top;
    });
  });
  await page.goto(`/incidents/${incidentId}`);
  await hydrated(page);
  await expect(page.locator('.freshness .updated')).toBeVisible();
  const [before, after] = await page.evaluate(() => [
    (window as any).controlsAt,
    document.querySelector('section.controls')?.getBoundingClientRect().top,
  ]);
  expect(before).toBeGreaterThan(0);
  expect(after).toBe(before);
  await removeTeam(page.request, teamId);
});

// The frame (top bar, page, bottom navigation) stays on screen while a page loads again: a reload
// the live stream brings used to take it all away for a moment and draw it again, a blink the
// person sees and a shift of the whole page.
test("an incident's page stays on screen while it loads again", async ({ page }) => {
  const { teamId, incidentId } = await teamWithIncident(page.request, 'blink', 'Blink');
  await page.addInitScript(() => {
    const w = window as any;
    w.frameRemoved = [];
    document.addEventListener('DOMContentLoaded', () => {
      new MutationObserver((changes) => {
        for (const c of changes) {
          for (const n of c.removedNodes) {
            if (n instanceof Element && n.matches('header.topbar, main.content, nav.bottom-nav')) w.frameRemoved.push(n.tagName);
          }
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
  });
  const live = liveOpened(page);
  await page.goto(`/incidents/${incidentId}`);
  await hydrated(page);
  await live();
  await expect(page.locator('.freshness .updated')).toBeVisible();
  // A note from elsewhere: the page loads again.
  const reloaded = page.waitForResponse((r) => r.url().includes('/rpc/incident_page'));
  const note = await page.request.post(`/api/incidents/${incidentId}/notes`, { data: { text: 'from the desk' } });
  expect(note.status()).toBe(201);
  await (await reloaded).finished();
  await expect(page.locator('.timeline')).toContainText('from the desk');
  expect(await page.evaluate(() => (window as any).frameRemoved)).toEqual([]);
  await removeTeam(page.request, teamId);
});
