import { expect } from '@playwright/test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, PASSWORD, hydrated, liveOpened, removeTeam, signInApi, pressSignIn } from './support';

// Team channels on the team page: an owner adds a Slack-format channel and sends it a test (the
// recording service receives it and the channel shows as working), adds a signed webhook (its
// secret is shown once), and sees a channel whose service cannot be reached marked failing with
// the reason.

test('owner adds channels, tests them and sees which fail', async ({ page, request }) => {
  test.setTimeout(120_000);
  const posts: { url: string; body: any }[] = [];
  const chat = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      posts.push({ url: req.url ?? '', body: JSON.parse(raw) });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((ok) => chat.listen(0, '127.0.0.1', ok));
  const port = (chat.address() as AddressInfo).port;
  // A port nothing listens on: the channel's service cannot be reached.
  const closed = http.createServer();
  await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((ok) => closed.close(ok));

  await signInApi(request);
  const suffix = Date.now().toString(36);
  const team = await (await request.post('/api/teams', { data: { name: `chat-${suffix}` } })).json();

  await page.goto(`/teams/${team.id}`);
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  const live = liveOpened(page);
  await pressSignIn(page);
  await expect(page).toHaveURL(new RegExp(`/teams/${team.id}$`));
  await hydrated(page);
  await live();

  const section = page.getByRole('region', { name: 'Channels' });
  await expect(section.getByText('No channels yet.')).toBeVisible();
  const add = section.locator('details.inner');
  await section.getByText('Add a channel').click();
  await add.getByLabel('Channel name').fill('#ops');
  await add.getByLabel('Posts to').selectOption('slack');
  await add.getByLabel('Webhook URL, room or channel id').fill(`http://127.0.0.1:${port}/hooks/secret-part`);
  await add.getByLabel('Escalated').uncheck();
  await add.getByRole('button', { name: 'Add channel' }).click();

  const ops = section.locator('li.channel').filter({ hasText: '#ops' });
  await expect(ops.locator('.chip')).toHaveText('not used yet');
  // The URL is a secret: only its origin is shown.
  await expect(ops).toContainText(`slack · http://127.0.0.1:${port}`);
  await expect(section).not.toContainText('secret-part');
  await expect(ops).toContainText('Hears opened, acknowledged, resolved, reassigned, resolution note');
  await ops.getByRole('button', { name: 'Send a test to #ops' }).click();
  await expect(section.getByText('Sent: the test message is in the channel.')).toBeVisible();
  await expect(ops.locator('.chip')).toHaveText('working');
  expect(posts).toHaveLength(1);
  expect(posts[0].url).toBe('/hooks/secret-part');
  expect(posts[0].body.text).toContain(`Test from Klaxon: team chat-${suffix}`);

  // A signed webhook: its secret is shown once, here. (The add form closed and cleared after the first.)
  await expect(add).not.toHaveAttribute('open', '');
  await expect(add.getByLabel('Channel name')).toHaveValue('');
  await section.getByText('Add a channel').click();
  await add.getByLabel('Channel name').fill('sms gateway');
  await add.getByLabel('Posts to').selectOption('webhook');
  await add.getByLabel('Webhook URL, room or channel id').fill(`http://127.0.0.1:${closedPort}/sms`);
  await add.getByRole('button', { name: 'Add channel' }).click();
  const secret = page.getByLabel('Signing secret of “sms gateway”');
  await expect(secret).toHaveValue(/^[A-Za-z0-9_-]{20,}$/);

  const sms = section.locator('li.channel').filter({ hasText: 'sms gateway' });
  await sms.getByRole('button', { name: 'Send a test to sms gateway' }).click();
  await expect(section.getByRole('alert')).toContainText(
    `The webhook at http://127.0.0.1:${closedPort} refused the connection or could not be reached`,
  );
  await expect(sms.locator('.chip')).toHaveText('failing');
  await expect(sms.locator('.error')).toContainText('refused the connection or could not be reached');

  // Removing one leaves the other.
  await sms.getByText('Remove…').click();
  await sms.getByRole('button', { name: 'Yes, remove sms gateway' }).click();
  await expect(section.locator('li.channel')).toHaveCount(1);

  chat.close();
  await removeTeam(request, team.id);
});
