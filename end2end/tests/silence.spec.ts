import { expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, PASSWORD, hydrated, removeTeam, teamWithIncident, pressSignIn } from './support';

// Silencing from the incident page against the real Alertmanager: the matchers are shown before
// anything is sent, one tap silences for an hour and Alertmanager has the silence, and expiring it
// early expires it there.

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/// Debian's Alertmanager on a free port with its own data directory.
async function startAlertmanager() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-am-'));
  fs.writeFileSync(path.join(dir, 'am.yml'), 'route:\n  receiver: none\nreceivers:\n  - name: none\n');
  const port = await freePort();
  const child = spawn(
    '/usr/bin/prometheus-alertmanager',
    [
      `--config.file=${path.join(dir, 'am.yml')}`,
      `--storage.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  // Alertmanager writes its state on the way out: its folder goes once it has exited.
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/-/ready`)).ok) return { url, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error('Alertmanager did not become ready in 10 s');
}

test('an incident is silenced in Alertmanager from its page, then the silence is expired early', async ({ page, request }) => {
  test.setTimeout(60_000);
  const am = await startAlertmanager();
  try {
    const { teamId, alertname, incidentId } = await teamWithIncident(request, 'silence', 'DiskFull');
    const [integration] = await (await request.get(`/api/teams/${teamId}/integrations`)).json();
    const set = await request.patch(`/api/teams/${teamId}/integrations/${integration.id}`, {
      data: { alertmanager_url: am.url },
    });
    expect(set.status()).toBe(200);

    await page.goto(`/incidents/${incidentId}`);
    await expect(page).toHaveURL(/\/login/);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await pressSignIn(page);
    await expect(page).toHaveURL(new RegExp(`/incidents/${incidentId}$`));
    await hydrated(page);

    // What the silence would match is on the page before anything is sent.
    const card = page.locator('details.card').filter({ hasText: 'Silence in Alertmanager' });
    await card.getByText('Silence in Alertmanager').click();
    await expect(card).toContainText(`alertname="${alertname}"`);
    await expect(card).toContainText('service="silence"');
    const silences = async () => (await fetch(`${am.url}/api/v2/silences`)).json();
    expect(await silences()).toEqual([]);

    await card.getByRole('button', { name: 'Silence for 1 hour' }).click();
    await expect(page.locator('.facts')).toContainText('Silenced in Alertmanager until');
    const [made] = await silences();
    expect(made.status.state).toBe('active');
    expect(made.createdBy).toBe('alice');
    expect(made.matchers).toContainEqual({ name: 'alertname', value: alertname, isRegex: false, isEqual: true });
    await expect(page.locator('ol.timeline li.tl-silenced')).toContainText('alerts silenced in Alertmanager for 1h');

    // The controls reload after an action, folded.
    if (!(await card.evaluate((d) => (d as HTMLDetailsElement).open))) await card.getByText('Silence in Alertmanager').click();
    await expect(card).toContainText('Silenced until');
    await card.getByRole('button', { name: 'Expire the silence now' }).click();
    await expect(page.locator('.facts')).not.toContainText('Silenced in Alertmanager');
    expect((await silences())[0].status.state).toBe('expired');

    await removeTeam(request, teamId);
  } finally {
    await am.stop();
  }
});
