import { expect, type APIRequestContext, type Page } from '@playwright/test';

// Helpers shared by the browser tests (not a test file itself: Playwright runs only *.spec.ts).

export const PASSWORD = 'correct horse battery';

/// Signs the API context in as alice, creating her first if this is a fresh instance.
export async function signInApi(request: APIRequestContext) {
  const bootstrap = await request.post('/api/bootstrap', {
    data: { username: 'alice', password: PASSWORD },
  });
  expect([201, 409]).toContain(bootstrap.status());
  const login = await request.post('/api/auth/login', {
    data: { username: 'alice', password: PASSWORD },
  });
  expect(login.status()).toBe(200);
}

/// Waits until the page's wasm has hydrated it, so client-side controls work.
export async function hydrated(page: Page) {
  await expect(page.locator('[data-hydrated="true"]')).toBeAttached({ timeout: 15_000 });
}

/// An Alertmanager webhook payload (version 4) with one firing alert of `service`.
export function alertmanagerPayload(
  alertname: string,
  fingerprint: string,
  service: string,
  instance: string,
  annotations: Record<string, string>,
) {
  const labels = { alertname, instance, service, severity: 'critical' };
  return {
    receiver: 'pager',
    status: 'firing',
    alerts: [
      {
        status: 'firing',
        labels,
        annotations,
        startsAt: new Date().toISOString(),
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: 'http://127.0.0.1:9090/graph?g0.expr=up',
        fingerprint,
      },
    ],
    groupLabels: { alertname, service },
    commonLabels: labels,
    commonAnnotations: annotations,
    externalURL: 'http://127.0.0.1:9093',
    version: '4',
    groupKey: `{}:{alertname="${alertname}", service="${service}"}`,
    truncatedAlerts: 0,
  };
}
