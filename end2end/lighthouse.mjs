// Lighthouse's mobile performance figures (its default: a mid-range phone, simulated slow 4G and a
// four-times slower CPU) of the pages a paged person opens: sign-in, the incident list with 12 and
// with 150 open incidents, and one incident. Each page is measured three times in Debian's
// Chromium against the release binary; the median is printed with its total blocking time, layout
// shift and paints. Prints figures and asserts nothing about time (the machine is shared and noisy).
//
//   node end2end/lighthouse.mjs      (after scripts/test.sh or scripts/run.sh built the release)
import { chromium } from '@playwright/test';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { seed, startKlaxon } from './instance.mjs';

const RUNS = Number(process.env.LIGHTHOUSE_RUNS || 3);
setTimeout(() => {
  console.error('lighthouse: the measurement did not finish within 15 minutes');
  process.exit(1);
}, 15 * 60_000).unref();

/// `n` firing alerts of different services, each its own incident.
function alerts(n) {
  return Array.from({ length: n }, (_, i) => ({
    alertname: `Alert${i}`, service: `svc-${i}`, instance: `host-${i}:9100`,
    severity: i % 3 ? 'warning' : 'critical', summary: `Something ${i} is wrong`,
  }));
}

const chrome = await chromeLauncher.launch({
  chromePath: '/usr/bin/chromium',
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic'],
});
process.on('exit', () => chrome.kill());
// Lighthouse clears a page's storage and cache before each run but keeps cookies (so signed-in pages
// can be measured); the session cookie is set in the browser's own context through Playwright.
const browser = (await chromium.connectOverCDP(`http://127.0.0.1:${chrome.port}`)).contexts()[0];

/// The median run (by score) of `RUNS` Lighthouse runs of `url`.
async function measure(url) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const { lhr } = await lighthouse(url, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: ['performance'],
    });
    if (lhr.runtimeError) throw new Error(`${url}: ${lhr.runtimeError.message}`);
    // A signed-in page that sent its visitor to sign in would be measured empty.
    if (lhr.finalDisplayedUrl !== url) throw new Error(`${url} ended at ${lhr.finalDisplayedUrl}`);
    const a = (id) => lhr.audits[id].numericValue;
    // What moved, so a shift names its element (Lighthouse's `layout-shifts` audit).
    const moved = (lhr.audits['layout-shifts']?.details?.items || [])
      .map((item) => `${item.node?.selector || item.node?.nodeLabel || '?'} ${item.score.toFixed(4)}`);
    runs.push({
      moved,
      score: Math.round(lhr.categories.performance.score * 100),
      tbt: a('total-blocking-time'), cls: a('cumulative-layout-shift'),
      fcp: a('first-contentful-paint'), lcp: a('largest-contentful-paint'), si: a('speed-index'),
    });
  }
  runs.sort((x, y) => x.score - y.score);
  return { median: runs[Math.floor(runs.length / 2)], scores: runs.map((r) => r.score) };
}

function report(name, { median: m, scores }) {
  console.log(
    `lighthouse: ${name}: performance ${m.score} (runs ${scores.join(', ')}), total blocking time ${Math.round(m.tbt)} ms, ` +
      `layout shift ${m.cls.toFixed(3)}, first paint ${Math.round(m.fcp)} ms, largest paint ${Math.round(m.lcp)} ms, ` +
      `speed index ${Math.round(m.si)} ms`,
  );
  if (m.moved.length) console.log(`lighthouse: ${name}: what moved: ${m.moved.join('; ')}`);
}

for (const count of [12, 150]) {
  const k = await startKlaxon();
  await seed(k, alerts(count));
  await browser.clearCookies();
  if (count === 12) report('sign-in', await measure(`${k.base}/login`));
  const [name, ...value] = k.cookie().split('=');
  await browser.addCookies([{ name, value: value.join('='), url: k.base }]);
  if (count === 12) {
    const [incident] = await (await k.api('GET', '/api/incidents?state=open&limit=1')).json();
    report('one incident', await measure(`${k.base}/incidents/${incident.id}`));
  }
  report(`incident list, ${count} open`, await measure(`${k.base}/`));
  k.stop();
}
process.exit(0);
