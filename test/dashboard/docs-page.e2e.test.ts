/**
 * The API reference at /docs in a real browser (Debian's chromium driven by playwright-core): Swagger UI,
 * served by the gateway, renders and runs a request under the page's Content-Security-Policy, with no
 * violation reported.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.js';

const CHROMIUM = '/usr/bin/chromium';
// The flags this machine's closed network needs (no background connections, no QUIC, no sandbox as root).
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('/docs in a real browser', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the docs page test`,
      );
    gateway = await startTestGateway();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('renders the API reference and runs "Try it out" under its Content-Security-Policy', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    const answer = await page.goto(`${gateway.url}/docs`);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");

    await page
      .locator('.swagger-ui .info .title')
      .filter({ hasText: 'Device Messaging Gateway' })
      .waitFor({ timeout: 20_000 });
    // Tags start folded (140 operations unfolded at once stopped Swagger UI rendering after the first tag).
    await page.locator('.opblock-tag[data-tag="System"]').click();
    const health = page
      .locator('.opblock-get')
      .filter({ has: page.locator('[data-path="/health"]') })
      .first();
    await health.locator('.opblock-summary').click();
    await health.getByRole('button', { name: 'Try it out' }).click();
    await health.getByRole('button', { name: 'Execute' }).click();
    await health
      .locator('.responses-wrapper .live-responses-table .response-col_status')
      .filter({ hasText: '200' })
      .first()
      .waitFor({ timeout: 10_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
