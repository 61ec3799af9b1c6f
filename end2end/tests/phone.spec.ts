import { expect } from '@playwright/test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, hydrated, pressSignIn } from './support';
import { startKlaxon } from '../instance.mjs';

// A phone number as a road, from the profile: a person adds a number for texts, reads the code
// texted to it, enters it, and sends a test, in under a minute. The provider is a stand-in for
// Twilio's REST API (https://www.twilio.com/docs/messaging/api/message-resource: a form POST to
// /2010-04-01/Accounts/{AccountSid}/Messages.json with HTTP Basic auth, answered 201 with the
// message's JSON), which records what it is sent.

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'carrier-auth-token';

test('a person adds a phone number for texts and verifies it by the code texted, in under a minute', async ({ browser }) => {
  const texts: Record<string, string>[] = [];
  const carrier = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const auth = 'Basic ' + Buffer.from(`${SID}:${TOKEN}`).toString('base64');
      if (req.method !== 'POST' || req.url !== `/2010-04-01/Accounts/${SID}/Messages.json` || req.headers.authorization !== auth) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 20003, message: 'Authenticate', status: 401 }));
        return;
      }
      const form = Object.fromEntries(new URLSearchParams(raw));
      texts.push(form);
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sid: `SM${texts.length}`, status: 'queued', to: form.To }));
    });
  });
  await new Promise<void>((ok) => carrier.listen(0, '127.0.0.1', ok));
  const port = (carrier.address() as AddressInfo).port;
  const klaxon = await startKlaxon({
    KLAXON_TWILIO_URL: `http://127.0.0.1:${port}`,
    KLAXON_TWILIO_ACCOUNT_SID: SID,
    KLAXON_TWILIO_AUTH_TOKEN: TOKEN,
    KLAXON_TWILIO_FROM: '+14155550100',
  });
  try {
    const context = await browser.newContext({ baseURL: klaxon.base, viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto('/me');
    await page.getByLabel('Username').fill('maria');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await pressSignIn(page);
    await expect(page).toHaveURL(/\/me$/);
    await hydrated(page);
    const started = Date.now();

    // A number without its country code is explained beside the form; nothing is texted.
    await page.getByLabel('Phone number for texts').fill('415 555 2671');
    await page.getByRole('button', { name: 'Text me a code' }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'country code' })).toBeVisible();
    expect(texts).toHaveLength(0);

    await page.getByLabel('Phone number for texts').fill('+1 415 555 2671');
    await page.getByRole('button', { name: 'Text me a code' }).click();
    const roads = page.getByRole('list', { name: 'Where pages reach you' });
    const road = roads.getByRole('listitem').filter({ hasText: 'Text messages' });
    await expect(road).toContainText('text messages · +1 415-555-2671');
    await expect(road).toContainText('waiting for its code');
    await expect.poll(() => texts.length).toBe(1);
    expect(texts[0].To).toBe('+14155552671');
    expect(texts[0].From).toBe('+14155550100');
    const code = /Klaxon code: (\d{6})/.exec(texts[0].Body)![1];

    await road.getByLabel('Code from the text').fill(code);
    await road.getByRole('button', { name: 'Verify' }).click();
    await expect(road).not.toContainText('waiting for its code');
    expect(Date.now() - started).toBeLessThan(60_000);

    await road.getByRole('button', { name: 'Send a test to Text messages' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Test sent.' })).toBeVisible();
    await expect.poll(() => texts.length).toBe(2);
    expect(texts[1].Body).toContain('Klaxon test page: pages reach this number.');
    await context.close();
  } finally {
    klaxon.stop();
    carrier.close();
  }
});
