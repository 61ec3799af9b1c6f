import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests', workers: 1, retries: 0, timeout: 30_000, reporter: [['list']],
  outputDir: '/tmp/pw-out',
  use: { baseURL: 'http://127.0.0.1:18090', trace: 'off', screenshot: 'only-on-failure' },
  projects: [{ name: 'm', use: { browserName: 'chromium', viewport: { width: 390, height: 844 },
    launchOptions: { executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox','--disable-gpu'] } } }],
});
