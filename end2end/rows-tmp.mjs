import { chromium } from '@playwright/test';
import { phone, seed, startKlaxon } from '/work/main/end2end/instance.mjs';
const k = await startKlaxon();
await seed(k, Array.from({ length: 10 }, (_, i) => ({ alertname: `Alert${i}`, service: `s${i}`, instance: `h${i}`, alertname: `Storm${i}xmx0a4jf6`, severity: i % 3 ? 'warning' : 'critical', summary: `Something ${i} is wrong with a long summary` })));
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
const c = await phone(b, k, { deviceScaleFactor: 1 });
const p = await c.newPage();
await p.goto(k.base + '/');
await p.waitForSelector('[data-hydrated="true"]');
console.log(await p.evaluate(() => {
  const li = document.querySelector('.list.incidents.compact > li');
  const r = (e) => e && Math.round(e.getBoundingClientRect().height);
  return { li: r(li), row: r(li.querySelector('.row')), main: r(li.querySelector('.row-main')), badges: r(li.querySelector('.badges')), title: r(li.querySelector('.incident-title')), meta: r(li.querySelector('.meta')), style: getComputedStyle(li.querySelector('.row-main')).display };
}));
await p.screenshot({ path: '/tmp/rows.png' });
await b.close(); k.stop(); process.exit(0);
