import { expect } from '@playwright/test';
import { startKlaxon } from '../instance.mjs';
import { startNtfy } from '../ntfy.mjs';
import { test, alertmanagerPayload, hydrated } from './support';

// A newcomer is paged within two minutes of signing up: from the invite link to the first page on
// their phone, on a Klaxon that publishes to an ntfy server (a recording stand-in: ntfy cannot
// run here). The profile names the server, makes a private topic in one tap, offers the ntfy
// app's subscribe link and its QR code, and the first-steps card ticks the test page once one
// reached the phone. Prints how long the whole road took; asserts the road, not the time.

test('from an invite link to the first page on the phone', async ({ browser }) => {
  test.setTimeout(90_000);
  const ntfy = await startNtfy();
  const k = await startKlaxon({ KLAXON_NTFY_URL: ntfy.url });
  try {
    const team = await (await k.api('POST', '/api/teams', { name: 'payments', display_name: 'Payments' })).json();
    const { key } = await (await k.api('POST', `/api/teams/${team.id}/integrations`, { name: 'prometheus' })).json();
    const invite = await (await k.api('POST', `/api/teams/${team.id}/invites`, { max_uses: 1 })).json();

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const started = Date.now();
    await page.goto(invite.url);
    await page.getByLabel('Username').fill('nia');
    await page.getByLabel('Password', { exact: true }).fill('a long new password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page).toHaveURL(`${k.base}/`);
    const steps = page.locator('.onboarding li');
    await expect(steps.nth(0)).toHaveClass('first-step');
    await expect(steps.nth(1)).toHaveClass('first-step');
    await expect(steps.nth(2)).toHaveClass('first-step done');

    await steps.nth(0).getByRole('link', { name: 'Get pages on your phone' }).click();
    await expect(page).toHaveURL(`${k.base}/me`);
    await hydrated(page);
    const card = page.getByRole('region', { name: 'Pages on your phone' });
    await expect(card.locator('.ntfy-server')).toHaveText(ntfy.url);
    await card.getByRole('button', { name: 'Use a private topic' }).click();
    const topic = card.locator('code.topic');
    await expect(topic).toHaveText(/^klaxon-[a-z0-9]{20}$/);
    const name = (await topic.textContent())!;
    // ntfy's documented subscribe link (plain HTTP here, so `secure=false`) and its QR code.
    const host = new URL(ntfy.url).host;
    await expect(card.getByRole('link', { name: 'Subscribe in the ntfy app' })).toHaveAttribute(
      'href',
      `ntfy://${host}/${name}?display=Klaxon&secure=false`,
    );
    const qr = card.getByLabel('QR code of the subscribe link').locator('svg');
    await expect(qr).toBeVisible();
    const box = (await qr.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(180);
    await expect(card.getByRole('link', { name: `${ntfy.url}/${name}` })).toBeVisible();
    // Web Push sits beside it.
    await expect(card.getByRole('button', { name: 'Page this phone' })).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);

    await card.getByRole('button', { name: 'Send test page' }).click();
    await expect(card.getByText(`Test page sent to ${name}.`)).toBeVisible();
    await expect.poll(() => ntfy.published.filter((m) => m.topic === name).map((m) => m.title)).toEqual(['Klaxon test page']);
    await expect(card.locator('.tested')).toContainText('Last test page reached you');

    await page.goto(`${k.base}/`);
    await expect(steps.nth(0)).toHaveClass('first-step done');
    await expect(steps.nth(1)).toHaveClass('first-step done');

    // On call today, then an alert: the page reaches the new topic with its Acknowledge button.
    const me = await (await k.api('GET', '/api/users')).json();
    const nia = me.find((u: { username: string }) => u.username === 'nia');
    const today = new Date().toISOString().slice(0, 10);
    expect((await k.api('POST', `/api/teams/${team.id}/schedule`, { user_id: nia.id, dates: [today] })).status).toBe(201);
    const hook = await k.api(
      'POST',
      `/api/alertmanager/webhook/${key}`,
      alertmanagerPayload('CheckoutDown', 'cafe0000cafe0000', 'checkout', 'checkout-1:8080', { summary: 'Checkout is down' }),
    );
    expect(hook.status).toBe(200);
    await expect
      .poll(() => ntfy.published.find((m) => m.topic === name && /CheckoutDown/.test(m.title)), { timeout: 30_000 })
      .toBeTruthy();
    const paged = ntfy.published.find((m) => m.topic === name && /CheckoutDown/.test(m.title))!;
    expect(paged.actions.map((a: { label: string }) => a.label)).toContain('Acknowledge');
    console.log(`newcomer: from the invite link to the first page on the phone in ${((paged.at - started) / 1000).toFixed(1)} s`);
    await context.close();
  } finally {
    k.stop();
    ntfy.stop();
  }
});
