// Browser tests against the release binary: each worker starts its own on a free port with a fresh
// data directory and its own OpenID Connect provider (the `instance` fixture in tests/support.ts).
// Build it first (scripts/test.sh does): Chromium comes from Debian, not from Playwright's download.
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  fullyParallel: false,
  // A file's tests run in order on one worker and share its instance; files could run side by side
  // (KLAXON_E2E_WORKERS=2), but on two cores that was slower (4.1 against 3.6 minutes) and axe's
  // page scans then outran their 30 s: one worker unless the machine has cores to spare.
  workers: Number(process.env.KLAXON_E2E_WORKERS || 1),
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 30_000,
  reporter: [['list']],
  use: { trace: 'retain-on-failure' },
  projects: [
    {
      name: 'chromium-mobile',
      use: {
        browserName: 'chromium',
        viewport: { width: 390, height: 844 },
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        },
      },
    },
  ],
});
