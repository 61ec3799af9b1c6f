// The guide's pictures of the phone app, taken from the real app: the release binary with a few
// incidents that came in through the webhook, at 390×844 in Debian's Chromium, dark scheme.
//
//   node end2end/screenshots.mjs        (writes docs/guide/src/screenshots/incidents.png, incident.png and push.png)
import { chromium } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { phone, root, seed, startKlaxon } from './instance.mjs';

const out = path.join(root, 'docs', 'guide', 'src', 'screenshots');
fs.mkdirSync(out, { recursive: true });
// The push card names the ntfy server; nothing is published in these few seconds but the pages of
// the seeded incidents, which wait for a server this machine cannot reach.
const k = await startKlaxon({ KLAXON_NTFY_URL: 'https://ntfy.sh' });
await seed(k, [
  { alertname: 'CheckoutErrors', service: 'checkout', instance: 'checkout-7f9c:8080', severity: 'critical', summary: '5xx above 5% for 10 minutes', minutesAgo: 4 },
  { alertname: 'PaymentLatency', service: 'payments-api', instance: 'payments-2:8080', severity: 'warning', summary: 'p99 latency above 2 s', minutesAgo: 25 },
  { alertname: 'DiskFilling', service: 'ledger-db', instance: 'db-1:9100', severity: 'warning', summary: 'Disk full within 12 hours at this rate', minutesAgo: 90 },
  { alertname: 'CertExpiry', service: 'edge', instance: 'edge-1:443', severity: 'info', summary: 'TLS certificate expires in 14 days', minutesAgo: 300 },
]);
const [first] = await (await k.api('GET', '/api/incidents?state=open&limit=10')).json().then((l) => l.filter((i) => i.title.includes('CheckoutErrors')));
await k.api('POST', '/api/me/onboarding/dismiss');
await k.api('POST', `/api/incidents/${first.id}/notes`, { text: 'Error spike started with the 14:02 deploy; rolling back.' });

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const context = await phone(browser, k, { colorScheme: 'dark' });
const page = await context.newPage();
const settle = async () => {
  await page.waitForSelector('[data-hydrated="true"]');
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);
};
await page.goto(k.base + '/');
await settle();
await page.screenshot({ path: path.join(out, 'incidents.png') });
await page.goto(`${k.base}/incidents/${first.id}`);
await settle();
await page.screenshot({ path: path.join(out, 'incident.png') });
// The profile's push card, as a newcomer sees it after "Use a private topic".
const me = await (await k.api('GET', '/api/me')).json();
await k.api('PUT', `/api/users/${me.id}/push-topic`, { push_topic: 'klaxon-7hq2m9xw4kzp3vd8ncf6' });
await page.goto(`${k.base}/me`);
await settle();
const card = page.locator('.push-card');
await card.scrollIntoViewIfNeeded();
await page.evaluate(() => window.scrollTo(0, document.querySelector('.push-card').getBoundingClientRect().top + window.scrollY - 8));
await page.screenshot({ path: path.join(out, 'push.png') });
await browser.close();
k.stop();
console.log(`screenshots: ${path.relative(root, out)}/incidents.png, incident.png, push.png`);
process.exit(0);
