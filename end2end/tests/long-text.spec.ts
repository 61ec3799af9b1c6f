import { expect, type Page } from '@playwright/test';
import { test, alertmanagerPayload, hydrated, removeTeam, signInApi, signInPage } from './support';

// Long text never breaks the page at 390 px: a 200-character alert name, an unbroken Grafana URL
// in a description and in a label, a long team name. URLs in descriptions are links, and a long
// title is clamped with the whole of it one tap away.

const grafana =
  'https://grafana.example.com/d/a1b2c3d4/payments-overview?orgId=1&from=now-6h&to=now&var-datasource=prometheus&var-cluster=eu-west-1&var-namespace=payments&viewPanel=42&refresh=30s';

async function widthStays390(page: Page, path: string) {
  await page.goto(path);
  await hydrated(page);
  await expect(page.locator('.loading')).toHaveCount(0, { timeout: 10_000 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `${path} is ${width} px wide`).toBe(390);
}

for (const scheme of ['dark', 'light'] as const) {
  test(`long names and URLs stay inside a 390 px screen (${scheme})`, async ({ page, request }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await signInApi(request);
    const suffix = Date.now().toString(36);
    const displayName = `PaymentsPlatformCheckoutReliabilityEngineering${suffix}`.padEnd(100, 'Z');
    const team = await (
      await request.post('/api/teams', { data: { name: `long-${suffix}`, display_name: displayName } })
    ).json();
    const { key } = await (await request.post(`/api/teams/${team.id}/integrations`, { data: { name: 'prometheus' } })).json();
    const alertname = `PaymentsCheckoutLatencyBudgetBurnRateTooHigh${suffix}`.padEnd(200, 'X');
    const payload = alertmanagerPayload(alertname, `${suffix}long`.padEnd(16, '0').slice(0, 16), 'checkout', 'checkout-1:9100', {
      description: `Latency SLO burning fast. Dashboard: ${grafana}`,
      dashboard: grafana,
    });
    (payload.alerts[0].labels as Record<string, string>).service = `checkout-${'very-long-service-name-'.repeat(6)}`;
    expect((await request.post(`/api/alertmanager/webhook/${key}`, { data: payload })).status()).toBe(200);
    const [incident] = await (await request.get(`/api/incidents?team_id=${team.id}`)).json();

    await signInPage(page);
    await widthStays390(page, `/incidents/${incident.id}`);
    // The bar stays on the screen.
    await expect(page.getByRole('button', { name: 'Acknowledge' })).toBeInViewport();
    // The description's URL is a link that opens the dashboard, not text to copy.
    const link = page.locator('.summary').getByRole('link');
    await expect(link).toHaveAttribute('href', grafana);
    await expect(link).toHaveAttribute('target', '_blank');
    // The title is clamped; the whole of it is one tap away.
    const title = page.getByRole('heading', { level: 1 });
    const box = await title.boundingBox();
    expect(box!.height).toBeLessThan(4 * 40);
    await page.getByText('Full title', { exact: true }).click();
    await expect(page.locator('.incident-head .full-title p')).toHaveText(incident.title);

    await widthStays390(page, '/');
    await widthStays390(page, `/teams/${team.id}`);
    await widthStays390(page, '/teams');
    await removeTeam(request, team.id);
  });
}
