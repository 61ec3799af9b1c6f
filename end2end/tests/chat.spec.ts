import { expect } from '@playwright/test';
import crypto from 'node:crypto';
import { test, hydrated, signInApi, signInPage, SLACK_SECRET } from './support';

// A person links their Slack account with a code from the profile: Slack posts the `/klaxon link`
// command, signed as Slack's documentation says (Node's crypto, not Klaxon's code); the profile
// then lists the account, and Unlink ends it.
test('a Slack account is linked with a code from the profile and unlinked there', async ({ page, request, baseURL }) => {
  await signInApi(request);
  await signInPage(page);
  await page.goto('/me');
  await hydrated(page);
  const card = page.getByRole('region', { name: 'Chat accounts' });
  await expect(card.getByText('No chat account linked.')).toBeVisible();
  await card.getByRole('button', { name: 'Get a link code' }).click();
  const shown = card.getByRole('status', { name: 'Your link code' });
  await expect(shown).toContainText(/\/klaxon link \d{6}/);
  const code = (await shown.locator('pre').first().innerText()).trim().split(' ').pop()!;
  // The same code, as Klaxon's Telegram bot takes it.
  await expect(shown.locator('pre').nth(1)).toHaveText(`/link ${code}`);

  const body = new URLSearchParams({
    team_id: 'T0ACME', team_domain: 'acme', channel_id: 'C0PAGES', user_id: 'U0ALICE',
    user_name: 'alice.s', command: '/klaxon', text: `link ${code}`,
  }).toString();
  const timestamp = Math.floor(Date.now() / 1000).toString();
  const signature = 'v0=' + crypto.createHmac('sha256', SLACK_SECRET).update(`v0:${timestamp}:${body}`).digest('hex');
  const answer = await fetch(`${baseURL}/api/chat/slack/commands`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    },
    body,
  });
  expect(answer.status).toBe(200);
  expect((await answer.json()).text).toBe('Linked: what you press or type here acts as alice in Klaxon.');

  await page.reload();
  await hydrated(page);
  await expect(card.getByText('@alice.s in acme')).toBeVisible();
  await card.getByRole('button', { name: 'Unlink @alice.s in acme' }).click();
  await expect(card.getByText('No chat account linked.')).toBeVisible();
  expect(await (await request.get('/api/me/chat-links')).json()).toEqual([]);
});
