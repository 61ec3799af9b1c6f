import { expect, chromium } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, PASSWORD, alertmanagerPayload, hydrated, signInApi, pressSignIn } from './support';

// Reaching a person by several roads, on the phone: setting up a second road and the rules that
// order them takes under a minute; a page sent by Web Push (through npm `web-push-testing`, a push
// service that checks the VAPID signature and decrypts the message independently of Klaxon) is shown
// by the app's real service worker with Acknowledge and Open, its Acknowledge works through the
// worker, and the all-clear replaces it.

const require = createRequire(import.meta.url);

/// npm `web-push-testing` in this process, listening on loopback only.
async function pushService() {
  const { PushApiModel } = require('web-push-testing/src/PushApiModel.js');
  const Server = require('web-push-testing/src/server.js');
  const model = new PushApiModel();
  const server = new Server(model, 0);
  const listening = server._app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  const port = listening.address().port;
  model.notifyUrl = `http://127.0.0.1:${port}/notify/`;
  server.setRequestHandlers();
  const url = `http://127.0.0.1:${port}`;
  const post = async (p: string, body: unknown) => {
    const r = await fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  };
  return {
    subscribe: async (applicationServerKey: string) =>
      (await post('/subscribe', { applicationServerKey, userVisibleOnly: 'true' })).data,
    notifications: async (clientHash: string) => (await post('/get-notifications', { clientHash })).data?.messages ?? [],
    close: () => listening.close(),
  };
}

async function signIn(page: import('@playwright/test').Page, to: string) {
  await page.goto(to);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await pressSignIn(page);
  await expect(page).toHaveURL(new RegExp(`${to}$`));
  await hydrated(page);
}

test('a person sets up a second road and the rules that order them in under a minute', async ({ browser, request, baseURL }) => {
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const aliceId = (await (await request.get('/api/me')).json()).id;
  expect((await request.put(`/api/users/${aliceId}/push-topic`, { data: { push_topic: `alice-${suffix}` } })).status()).toBe(200);

  const context = await browser.newContext({ baseURL, timezoneId: 'Europe/Berlin', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await signIn(page, '/me');
  const started = Date.now();

  await page.getByLabel('Another ntfy topic').fill(`alice-backup-${suffix}`);
  await page.getByRole('button', { name: 'Add topic' }).click();
  const roads = page.getByRole('list', { name: 'Where pages reach you' });
  await expect(roads.getByText('Backup ntfy')).toBeVisible();
  await hydrated(page);
  // Added: the address is in the list, and its form is empty again.
  await expect(page.getByLabel('Another ntfy topic')).toHaveValue('');

  // The push topic at once, the backup topic five minutes later.
  await page.getByRole('button', { name: 'Add a step', exact: true }).click();
  await page.getByRole('button', { name: 'Add a step', exact: true }).click();
  const steps = page.locator('ol.steps').first().getByRole('listitem');
  await expect(steps).toHaveCount(2);
  await expect(steps.nth(0).getByLabel('After minutes')).toHaveValue('0');
  await expect(steps.nth(1).getByLabel('After minutes')).toHaveValue('5');
  await steps.nth(1).getByLabel('Page by').selectOption({ label: 'Backup ntfy (ntfy topic)' });
  // The phone's time zone is offered; quiet hours from 22:00 to 07:00.
  await expect(page.getByLabel('Your time zone')).toHaveValue('Europe/Berlin');
  await page.getByLabel('Quiet hours').check();
  await page.getByRole('button', { name: 'Save rules' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Rules saved.' })).toBeVisible();
  expect(Date.now() - started).toBeLessThan(60_000);

  const methods = await (await request.get(`/api/users/${aliceId}/contact-methods`)).json();
  const backup = methods.find((m: { target: string }) => m.target === `alice-backup-${suffix}`);
  expect(await (await request.get(`/api/users/${aliceId}/notification-rules`)).json()).toEqual({
    high: [
      { after_minutes: 0, method_id: null },
      { after_minutes: 5, method_id: backup.id },
    ],
    low: [],
    time_zone: 'Europe/Berlin',
    quiet_hours: { start: '22:00', end: '07:00' },
  });

  // A rule the server refuses is explained next to the form: more than a day's wait.
  await steps.nth(1).getByLabel('After minutes').fill('2000');
  await page.getByRole('button', { name: 'Save rules' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'minutes must be 0 to 1440' })).toBeVisible();

  // Leave alice as the other tests expect her.
  expect((await request.put(`/api/users/${aliceId}/notification-rules`, { data: {} })).status()).toBe(200);
  expect((await request.delete(`/api/users/${aliceId}/contact-methods/${backup.id}`)).status()).toBe(204);
  await context.close();
});

test('a webhook road is added from the profile, its secret shown once and its code entered', async ({ browser, request, baseURL }) => {
  await signInApi(request);
  const aliceId = (await (await request.get('/api/me')).json()).id;
  // An SMS gateway stand-in that records what it is sent.
  const got: { event: string; body: any }[] = [];
  const gateway = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      got.push({ event: String(req.headers['klaxon-event']), body: JSON.parse(raw) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((ok) => gateway.listen(0, '127.0.0.1', ok));
  const port = (gateway.address() as AddressInfo).port;

  const context = await browser.newContext({ baseURL, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await signIn(page, '/me');
  await page.getByText('A webhook (an SMS gateway, your own tool)').click();
  await page.getByLabel('Webhook URL').fill(`http://127.0.0.1:${port}/sms?key=gateway-credential`);
  await page.getByRole('button', { name: 'Add webhook' }).click();
  const secret = page.getByLabel('Signing secret of “Webhook”');
  await expect(secret).toHaveValue(/^[A-Za-z0-9]{32,}$/);
  const roads = page.getByRole('list', { name: 'Where pages reach you' });
  const road = roads.getByRole('listitem').filter({ hasText: 'Webhook' });
  await expect(road).toContainText(`webhook · http://127.0.0.1:${port}`);
  await expect(roads).not.toContainText('gateway-credential');
  await expect(road).toContainText('waiting for its code');

  await expect.poll(() => got.length).toBe(1);
  expect(got[0].event).toBe('verify');
  await road.getByLabel('Code sent to the webhook').fill(got[0].body.code);
  await road.getByRole('button', { name: 'Verify' }).click();
  await expect(road).not.toContainText('waiting for its code');
  // Added and verified: the form that took the address is folded and empty.
  await expect(page.getByLabel('Webhook URL')).toBeHidden();
  await expect(page.getByLabel('Webhook URL')).toHaveValue('');
  await road.getByRole('button', { name: 'Send a test to Webhook' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Test sent.' })).toBeVisible();
  await expect.poll(() => got.map((g) => g.event)).toEqual(['verify', 'test']);

  const methods = await (await request.get(`/api/users/${aliceId}/contact-methods`)).json();
  const hook = methods.find((m: { kind: string }) => m.kind === 'webhook');
  expect(hook.verified).toBe(true);
  expect((await request.delete(`/api/users/${aliceId}/contact-methods/${hook.id}`)).status()).toBe(204);
  await context.close();
  gateway.close();
});

test('a Web Push page shows on the phone, acknowledges through the service worker, and the all-clear replaces it', async ({ request, baseURL }) => {
  test.setTimeout(120_000);
  await signInApi(request);
  const suffix = Date.now().toString(36);
  const aliceId = (await (await request.get('/api/me')).json()).id;
  const service = await pushService();
  // No rules: every verified road at once.
  expect((await request.put(`/api/users/${aliceId}/notification-rules`, { data: {} })).status()).toBe(200);

  // The push service's subscription, made with the install's key, as the phone's own.
  const { public_key: key } = await (await request.get('/api/webpush/key')).json();
  const sub = await service.subscribe(key);
  const added = await request.post(`/api/users/${aliceId}/contact-methods`, {
    data: { name: `Pixel ${suffix}`, kind: 'webpush', subscription: { endpoint: sub.endpoint, keys: sub.keys } },
  });
  expect(added.status()).toBe(201);
  const methodId = (await added.json()).id;

  // A team with alice on call today, and an alert.
  const team = await (await request.post('/api/teams', { data: { name: `reach-${suffix}` } })).json();
  const today = new Date().toISOString().slice(0, 10);
  expect((await request.post(`/api/teams/${team.id}/schedule`, { data: { user_id: aliceId, dates: [today] } })).status()).toBe(201);
  const { key: hook } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
  const alertname = `PushedDown${suffix}`;
  const fingerprint = `${suffix}${Math.random().toString(16).slice(2)}`.slice(0, 16);
  const fire = (status: string) => {
    const payload = alertmanagerPayload(alertname, fingerprint, 'api', 'api-1:9100', { summary: 'API down' });
    payload.status = status;
    payload.alerts[0].status = status;
    if (status === 'resolved') payload.alerts[0].endsAt = new Date().toISOString();
    return request.post(`/api/alertmanager/webhook/${hook}`, { data: payload });
  };
  expect((await fire('firing')).status()).toBe(200);

  // The push service received it, checked its VAPID signature and decrypted it.
  await expect.poll(async () => (await service.notifications(sub.clientHash)).length, { timeout: 30_000 }).toBe(1);
  const [pageText] = await service.notifications(sub.clientHash);
  const pushed = JSON.parse(pageText);
  expect(pushed.title).toContain(alertname);
  expect(pushed.ack_url).toMatch(/\/api\/notify\/ack\//);

  // The phone: the app installed, notifications allowed, its service worker running.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'klaxon-push-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    viewport: { width: 390, height: 844 },
    baseURL,
  });
  await context.grantPermissions(['notifications'], { origin: baseURL });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  const registration = new Promise<string>((resolve) =>
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const r = registrations.find((x: { scopeURL: string; isDeleted: boolean }) => x.scopeURL.startsWith(baseURL!) && !x.isDeleted);
      if (r) resolve(r.registrationId);
    }),
  );
  await signIn(page, '/');
  await expect.poll(() => page.evaluate(async () => !!(await navigator.serviceWorker.ready).active)).toBe(true);
  const registrationId = await registration;
  // Delivers a push and waits for the worker's word that it is on screen: Chromium's
  // getNotifications() called while a notification is still being shown can miss it for good.
  const deliver = async (data: string) => {
    await page.evaluate(() => {
      (window as unknown as { shown: Promise<void> }).shown = new Promise<void>((resolve) =>
        navigator.serviceWorker.addEventListener('message', (e) => e.data?.type === 'klaxon-push-shown' && resolve()),
      );
    });
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: new URL(baseURL!).origin, registrationId, data });
    await page.evaluate(() => (window as unknown as { shown: Promise<void> }).shown);
  };
  const shown = () =>
    page.evaluate(async () =>
      (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        tag: n.tag,
        requireInteraction: n.requireInteraction,
        actions: (n as unknown as { actions: { action: string; title: string }[] }).actions.map((a) => a.title),
      })),
    );

  await deliver(pageText);
  await expect.poll(shown, { timeout: 15_000 }).toEqual([
    {
      title: pushed.title,
      body: pushed.body,
      tag: pushed.tag,
      requireInteraction: true,
      actions: ['Acknowledge', 'Open'],
    },
  ]);

  // Its Acknowledge, handled by the worker as a tap on it would be.
  const worker = context.serviceWorkers()[0];
  await worker.evaluate(async () => {
    const [n] = await (self as unknown as ServiceWorkerGlobalScope).registration.getNotifications();
    await (self as unknown as { act: (n: Notification, a: string) => Promise<void> }).act(n, 'ack');
  });
  const [incident] = await (await request.get(`/api/incidents?team_id=${team.id}`)).json();
  expect(incident.state).toBe('acknowledged');
  expect((await (await request.get(`/api/incidents/${incident.id}`)).json()).acknowledged_by).toBe('alice');
  await expect.poll(shown, { timeout: 15_000 }).toEqual([expect.objectContaining({ body: 'Acknowledged: it is yours.', requireInteraction: false, actions: ['Open'] })]);

  // The all-clear comes the same way and takes the page's place.
  expect((await fire('resolved')).status()).toBe(200);
  await expect.poll(async () => (await service.notifications(sub.clientHash)).length, { timeout: 30_000 }).toBe(2);
  const clearText = (await service.notifications(sub.clientHash))[1];
  expect(JSON.parse(clearText).kind).toBe('all_clear');
  await deliver(clearText);
  await expect.poll(shown, { timeout: 15_000 }).toEqual([
    expect.objectContaining({ title: expect.stringMatching(/^\[RESOLVED\]/), tag: pushed.tag, requireInteraction: false }),
  ]);

  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  service.close();
  expect((await request.delete(`/api/users/${aliceId}/contact-methods/${methodId}`)).status()).toBe(204);
  expect((await request.delete(`/api/teams/${team.id}`)).status()).toBe(204);
});
