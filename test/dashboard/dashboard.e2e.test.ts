/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core, against a real gateway on
 * 127.0.0.1 serving a fresh build of dashboard/. Screenshots go to test-results/ (look at them).
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';
import { pino } from 'pino';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/gateway.js';
import { WEBHOOK_EVENT_KINDS } from '../../src/webhooks/envelope.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, apiClient, tempDir, testConfig } from '../support/gateway.js';
import { TestReceiver } from '../webhooks/support/receiver.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
/** A 1×1 PNG: a picture to attach. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test-results');
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

describe('dashboard in a real browser', () => {
  let gateway: Gateway;
  let receiver: TestReceiver;
  let browser: Browser;
  let page: Page;
  let outDir: string;
  const problems: string[] = [];
  const failed: string[] = [];
  /** Requests the page made anywhere but the gateway: it must work offline. */
  const outside: string[] = [];

  beforeAll(async () => {
    // .ci/run installs it on a fresh machine; a developer runs `apt-get install -y chromium` once.
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the dashboard test`,
      );
    outDir = tempDir('dmg-dashboard-');
    await build({
      configFile: join(ROOT, 'dashboard/vite.config.ts'),
      build: { outDir, emptyOutDir: true },
      logLevel: 'silent',
    });
    const config = testConfig({
      DEFAULT_ENGINE: 'sandbox',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      OUTBOX_SPACING: '0ms',
      SANDBOX_DELIVERED_DELAY_MS: '50',
      SANDBOX_READ_DELAY_MS: '50',
    });
    gateway = await startGateway(config, {
      logger: pino({ level: 'silent' }),
      validateResponses: true,
      dashboardDir: outDir,
    });
    receiver = await TestReceiver.start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
    // A phone-sized window: the page must be usable there.
    page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    // Failed requests are checked by URL below; anything else the console reports as an error (a CSP violation…) is a problem.
    page.on(
      'console',
      (message) =>
        message.type() === 'error' &&
        !message.text().startsWith('Failed to load resource') &&
        problems.push(message.text()),
    );
    page.on(
      'response',
      (response) =>
        response.status() >= 400 &&
        failed.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`),
    );
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol !== 'blob:' && url.protocol !== 'data:' && url.hostname !== '127.0.0.1') outside.push(url.href);
    });
    page.on('dialog', (dialog) => void dialog.accept());
    mkdirSync(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await gateway?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: true });
  const text = (testId: string, value: string | RegExp) =>
    page.getByTestId(testId).filter({ hasText: value }).waitFor({ timeout: 15_000 });
  /** axe-core over the page as it is: no violation of WCAG 2.x level A or AA. */
  const accessible = async (where: string) => {
    if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE);
    const violations = await page.evaluate<string[]>(`axe
      .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
      .then((result) => result.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`);
    expect(violations, where).toEqual([]);
  };

  it('serves the page and its files with their types and a strict Content-Security-Policy', async () => {
    const answer = await fetch(`${gateway.url}/dashboard`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = answer.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await answer.text();
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1];
    const style = /href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(html)![1];
    expect((await fetch(`${gateway.url}${script}`)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${gateway.url}${style}`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    for (const path of [
      '/dashboard/assets/nothing.js',
      '/dashboard/assets/..%2Fsecret.js',
      '/dashboard/assets/index.html',
    ]) {
      const missing = await fetch(`${gateway.url}${path}`);
      expect(missing.status, path).toBeGreaterThanOrEqual(400);
      expect(missing.status, path).toBeLessThan(500);
    }
  });

  it('signs in, creates a device, pairs it by QR, sends, cancels, and delivers to a webhook, live', async () => {
    const api = apiClient(gateway.url);
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await shot('1-sign-in');
    await accessible('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await text('stream-status', 'live');
    // The first screen is the overview of today.
    await text('overview-devices', /^0$/);
    await accessible('overview');
    expect(await page.evaluate('location.href')).not.toContain(ADMIN_KEY);

    await page.getByLabel('Id (optional)').fill('browser-1');
    await page.getByLabel('Name', { exact: true }).fill('Browser test');
    await page.getByLabel('Engine').selectOption('sandbox');
    await page.getByRole('button', { name: 'Create device' }).click();
    await text('new-key', /dk_/);
    await shot('2-created');

    await page.getByRole('button', { name: 'Open session' }).click();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor({ timeout: 15_000 });
    await page.waitForFunction("document.querySelector('.qr img')?.naturalWidth > 0");
    await text('state-browser-1', 'qr');
    await shot('3-qr');

    // The phone scans: the page turns online from the stream, without a reload.
    const scanned = await api('POST', '/sandbox/devices/browser-1/scan', {
      admin: true,
      json: { phone: '4915100002222' },
    });
    expect(scanned.status).toBe(202);
    await text('session-state', /^online$/);
    await text('state-browser-1', /^online$/);
    await shot('4-online');
    await accessible('a device online');

    // The sandbox's contact writes; the inbox shows the chat, and the operator answers it in reply, with a picture.
    await page.getByLabel("A contact's number").fill('4915100009999');
    await page.getByLabel('Message from the contact').fill('Is my order on its way?');
    await page.getByRole('button', { name: 'Receive message' }).click();
    await page.getByTestId('chat-4915100009999').click();
    await page.getByTestId('messages').getByText('Is my order on its way?').waitFor({ timeout: 15_000 });
    await page
      .getByRole('button', { name: /^Reply to / })
      .first()
      .click();
    await page.getByText('Replying to: Is my order on its way?').waitFor();
    await page
      .getByLabel('Attach a file (optional)')
      .setInputFiles({ name: 'parcel.png', mimeType: 'image/png', buffer: PNG });
    await page.getByLabel('Caption (optional)').fill('Here it is');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const mine = page.getByTestId('messages').locator('.message.mine').filter({ hasText: 'Here it is' });
    await mine.locator('blockquote').filter({ hasText: 'Is my order on its way?' }).waitFor({ timeout: 15_000 });
    await mine
      .locator('.badge')
      .filter({ hasText: /sent|delivered|read/ })
      .waitFor({ timeout: 15_000 });
    // Once sent, the picture is kept and shown from the gateway (through the key, as an object URL).
    await mine.locator('img.media').waitFor({ timeout: 15_000 });
    await page.waitForFunction(
      "[...document.querySelectorAll('.message.mine img.media')].some((img) => img.naturalWidth === 1)",
    );
    const picture = await api('GET', '/devices/browser-1/chats/4915100009999/messages', { admin: true });
    expect(picture.body.items[0]).toMatchObject({ type: 'image', body: 'Here it is', fromMe: true });
    await page.getByRole('button', { name: 'Call the device' }).click();
    await page.getByText('The contact is calling.').waitFor();
    await page.getByLabel('Presence', { exact: true }).selectOption('recording');
    await page.getByRole('button', { name: 'Send presence' }).click();
    await page.getByText('The contact is recording.').waitFor();
    await shot('4b-inbox');
    await accessible('the inbox');
    // Search finds a message by its words, whatever their case; the filters keep to some chats.
    await page.getByLabel('Search messages').fill('ORDER way');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const found = page.getByTestId('found');
    await found.getByText('Is my order on its way?').waitFor();
    expect(await found.locator('li').count()).toBe(1);
    await shot('4c-search');
    await page.getByLabel('Search messages').fill('nothing like this');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await found.getByText('No message has these words.').waitFor();
    await found.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Show', { exact: true }).selectOption('pinned');
    await page.getByText('No such conversations.').waitFor();
    await page.getByLabel('Show', { exact: true }).selectOption('unread');
    await page.getByTestId('chat-4915100009999').waitFor();
    await accessible('the inbox filtered');
    await page.getByLabel('Show', { exact: true }).selectOption('');

    // The picker offers every kind the server accepts, all picked for a new webhook; one left out is not asked for.
    const picker = page.getByRole('group', { name: 'Events' });
    const offered = (await picker.locator('label').allTextContents()).map((label) => label.trim());
    expect(offered).toEqual(expect.arrayContaining([...WEBHOOK_EVENT_KINDS]));
    for (const kind of WEBHOOK_EVENT_KINDS)
      expect(await picker.getByRole('checkbox', { name: kind, exact: true }).isChecked(), kind).toBe(true);
    await page.getByRole('checkbox', { name: 'presence.update', exact: true }).uncheck();
    await page.getByLabel('Receiver URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();
    const { body: hook } = await api('GET', '/devices/browser-1/hooks', { admin: true });
    expect([...hook.events].sort()).toEqual(WEBHOOK_EVENT_KINDS.filter((kind) => kind !== 'presence.update').sort());
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText(/Test delivered \(200/).waitFor();

    await page.getByLabel('To (phone number, digits)').fill('4915112345678');
    await page.getByLabel('Text').fill('Hello from the browser');
    await page.getByRole('button', { name: 'Send text' }).click();
    await page.getByText(/Queued 3EB0/).waitFor();
    await page.getByTestId('history').getByText('Hello from the browser').waitFor({ timeout: 15_000 });
    await page
      .getByTestId('history')
      .getByText(/^sent|sent 3EB0/)
      .first()
      .waitFor({ timeout: 15_000 });
    await receiver.waitUntil(() => receiver.of('browser-1').some((r) => r.envelope.event === 'message.status'));
    await page.getByTestId('deliveries').getByText('delivered').first().waitFor({ timeout: 15_000 });
    await shot('5-sent-and-delivered');

    // With the session closed a message waits in the outbox, where it can be cancelled.
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await text('session-state', /^closed$/);
    await page.getByLabel('Text').fill('Never sent');
    await page.getByRole('button', { name: 'Send text' }).click();
    const cancel = page.getByRole('button', { name: /^Cancel 3EB0/ });
    await cancel.waitFor({ timeout: 15_000 });
    // The row says what and when.
    await page.locator('.preview').filter({ hasText: 'Never sent' }).waitFor();
    await shot('6-outbox');
    await cancel.click();
    await page.getByText('Nothing waiting.').waitFor({ timeout: 15_000 });
    await page
      .getByTestId('history')
      .getByText(/cancelled/)
      .first()
      .waitFor({ timeout: 15_000 });

    const { body: outbox } = await api('GET', '/devices/browser-1/outbox', { admin: true });
    expect(outbox.items).toEqual([]);
    await eventually(
      () =>
        receiver
          .of('browser-1')
          .some((r) => r.envelope.event === 'session.state' && r.envelope.data.state === 'closed'),
      'the closed state delivered',
    );

    await page.setViewportSize({ width: 1280, height: 900 });
    await shot('7-desktop');
    // The one expected refusal so far: the webhook settings of a device that had none yet.
    expect(new Set(failed)).toEqual(new Set(['GET /devices/browser-1/hooks 404']));

    // A scoped key for a client that only reads: shown once, listed without its secret, and it works until deleted.
    await page.getByLabel('Name of a new key').fill('CRM');
    await page.getByRole('checkbox', { name: /^send:/ }).check();
    await page.getByRole('button', { name: 'Make key' }).click();
    const scoped = ((await page.getByTestId('scoped-key').locator('code').textContent()) ?? '').trim();
    expect(scoped).toMatch(/^dk_/);
    await page.getByTestId('keys').getByText('read, send').waitFor();
    await accessible('the keys');
    await shot('7a-keys');
    expect((await api('GET', '/devices/browser-1/outbox', { deviceKey: scoped })).status).toBe(200);
    expect((await api('PUT', '/devices/browser-1/hooks', { deviceKey: scoped, json: {} })).status).toBe(403);
    await page.getByRole('button', { name: 'Delete key CRM' }).click();
    await page.getByText('Key "CRM" deleted: it stopped working.').waitFor();
    await page.getByTestId('scoped-key').waitFor({ state: 'detached' });
    expect((await api('GET', '/devices/browser-1/outbox', { deviceKey: scoped })).status).toBe(401);

    await page.getByLabel('Name', { exact: true }).nth(1).fill('Renamed device');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByTestId('device-browser-1').getByText('Renamed device').waitFor();
    // The overview counts what this device did today.
    await page.getByRole('button', { name: 'Overview' }).click();
    await page.getByTestId('overview-browser-1').waitFor();
    await text('overview-received', /^1$/);
    expect(Number(await page.getByTestId('overview-sent').textContent())).toBeGreaterThanOrEqual(2);
    await text('overview-webhooks', /^0$/);
    // A receiver that fails holds deliveries back: the overview shows them waiting, and since when.
    receiver.respond = () => ({ status: 503 });
    // Opening the session again: its states are webhook events.
    expect((await api('POST', '/devices/browser-1/session/open', { admin: true })).status).toBeLessThan(300);
    await text('overview-webhooks', /^[1-9]\d* since /);
    await page
      .getByTestId('overview-browser-1')
      .getByText(/^[1-9]\d* since /)
      .waitFor();
    await shot('7b-overview');
    await accessible('the overview with webhooks waiting');
    receiver.respond = () => ({ status: 200 });
    await page.getByTestId('overview-browser-1').getByRole('button').click();

    // Calls and pacing: what the form saves is what the API reads, and the day's cap shows at once.
    await page.getByLabel('Reject incoming calls').check();
    await page.getByLabel('Sends per day (empty: no cap)').fill('5');
    await page.getByLabel('From', { exact: true }).fill('22:00');
    await page.getByLabel('To', { exact: true }).fill('07:00');
    await page.getByLabel('Time zone of the day and the quiet hours').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await text('pacing-status', / of 5/);
    const { body: settings } = await api('GET', '/devices/browser-1/settings', { admin: true });
    expect(settings).toMatchObject({
      rejectCalls: true,
      pacing: {
        timezone: 'Europe/Berlin',
        dailyCap: 5,
        quietHours: { from: '22:00', to: '07:00' },
        unansweredLimit: null,
        typing: false,
      },
    });
    // A bad time zone is the server's 400, said in the notice; nothing changes.
    await page.getByLabel('Time zone of the day and the quiet hours').fill('Mars/Olympus');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page
      .locator('.notice')
      .filter({ hasText: /timezone|time zone/i })
      .waitFor();
    await accessible('calls and pacing');
    await shot('7c-pacing');

    await page.getByRole('button', { name: 'Delete device' }).click();
    await page.getByText('No devices yet.').waitFor();
    expect((await api('GET', '/devices/browser-1', { admin: true })).status).toBe(404);
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
  }, 120_000);

  it('links a device with a pairing code typed on the phone, and turns online live', async () => {
    const api = apiClient(gateway.url);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Id (optional)').fill('browser-2');
    await page.getByLabel('Name', { exact: true }).first().fill('Paired by code');
    await page.getByLabel('Engine').selectOption('sandbox');
    await page.getByRole('button', { name: 'Create device' }).click();
    await text('new-key', /dk_/);

    // "*": every kind, present and future; the kinds one by one are then all in, and cannot be picked apart.
    await page.getByRole('checkbox', { name: /every kind, present and future/ }).check();
    for (const kind of WEBHOOK_EVENT_KINDS) {
      const box = page.getByRole('checkbox', { name: kind, exact: true });
      expect([await box.isChecked(), await box.isDisabled()], kind).toEqual([true, true]);
    }
    await page.getByLabel('Receiver URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();
    expect((await api('GET', '/devices/browser-2/hooks', { admin: true })).body.events).toEqual(['*']);
    // Removed before anything happens: the history test below counts this device's events.
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByText('Webhook removed.').waitFor();

    await page.getByLabel("The account's phone number (international, digits)").fill('+49 151 0000 3333');
    await page.getByRole('button', { name: 'Get a pairing code' }).click();
    await text('session-state', /^pairing$/);
    const code = (await page.getByTestId('pairing-code').textContent())!;
    expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    await shot('8-pairing-code');

    // The phone enters the code: the page turns online from the stream, without a reload.
    const entered = await api('POST', '/sandbox/devices/browser-2/pair', { admin: true, json: { code } });
    expect(entered.status).toBe(202);
    await text('session-state', /^online$/);
    await text('state-browser-2', /^online$/);
    expect((await api('GET', '/devices/browser-2', { admin: true })).body.session.phone).toBe('4915100003333');
    await shot('9-paired-online');
    expect(problems).toEqual([]);
  });

  it('shows the newest events of a long history (more than the 5,000 the page once read forwards)', async () => {
    const api = apiClient(gateway.url);
    // A long history, quickly: 5,100 events on a stream of the device's own (its first event names the device).
    const notes = Array.from({ length: 5_100 }, (_, n) => ({ type: 'TestNote', data: { deviceId: 'browser-2', n } }));
    for (let start = 0; start < notes.length; start += 1_000)
      await gateway.store.append('notes-browser-2', notes.slice(start, start + 1_000));
    await eventually(
      async () =>
        (await api('GET', '/devices/browser-2/events?direction=backwards&limit=1', { admin: true })).body.items[0]?.data
          .n === 5_099,
      'the notes in the history',
    );
    // The latest event of all: the page reloads its history when it arrives.
    expect(
      (
        await api('POST', '/sandbox/devices/browser-2/inbound', {
          admin: true,
          json: { from: '4915100004444', body: 'The newest of them all' },
        })
      ).status,
    ).toBe(202);
    await page.getByTestId('history').getByText('The newest of them all').waitFor({ timeout: 15_000 });
    const shown = page.getByTestId('history').locator('li');
    expect(await shown.count()).toBe(200);
    expect(await shown.first().textContent()).toContain('The newest of them all');
    expect(problems).toEqual([]);
  });

  it('pages chats, messages and search results by cursor, shows who reacted, and edits the warm-up', async () => {
    const api = apiClient(gateway.url);
    const inbound = async (json: Record<string, unknown>) => {
      const answer = await api('POST', '/sandbox/devices/browser-2/inbound', { admin: true, json });
      expect(answer.status).toBe(202);
      return answer.body.waMessageId as string;
    };
    // 51 messages in one chat and 51 chats (with the one of the test above): a page of each is 50.
    const FRIEND = '4915100005000';
    let first = '';
    for (let n = 0; n < 51; n++) {
      const id = await inbound({ from: FRIEND, body: `Message number ${n}` });
      if (n === 0) first = id;
    }
    for (let n = 1; n < 50; n++) await inbound({ from: `49151000050${String(n).padStart(2, '0')}`, body: 'Hello' });
    await inbound({ from: FRIEND, type: 'reaction', messageId: first, body: '👍' });
    await eventually(
      async () =>
        (await api('GET', `/devices/browser-2/chats/${FRIEND}/messages?limit=200`, { admin: true })).body.items.find(
          (m: { waMessageId: string }) => m.waMessageId === first,
        )?.reactions.length === 1,
      'the reaction recorded',
    );
    // The oldest chat is the one of the test above: it comes with the second page.
    const oldest = page.getByTestId('chat-4915100004444');
    await page.getByTestId(`chat-${FRIEND}`).waitFor({ timeout: 15_000 });
    await page.getByTestId('chat-4915100005049').waitFor({ timeout: 15_000 });
    expect(await oldest.count()).toBe(0);
    expect(await page.getByTestId('chats').locator('li').count()).toBe(50);
    await page.getByRole('button', { name: 'More conversations' }).click();
    await oldest.waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('chats').locator('li').count()).toBe(51);
    await page.getByRole('button', { name: 'More conversations' }).waitFor({ state: 'detached' });

    // The chat shows its newest 50; the oldest (with its reaction) comes with "Older messages".
    await page.getByTestId(`chat-${FRIEND}`).click();
    const messages = page.getByTestId('messages');
    await messages.getByText('Message number 50').waitFor({ timeout: 15_000 });
    expect(await messages.locator('li.message').count()).toBe(50);
    expect(await messages.getByText('Message number 0', { exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Older messages' }).click();
    await messages.getByText('Message number 0', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await messages.locator('li.message').count()).toBe(51);
    await page.getByRole('button', { name: 'Older messages' }).waitFor({ state: 'detached' });
    const reactions = page.getByTestId(`reactions-${first}`);
    await reactions.getByRole('listitem').filter({ hasText: '👍 +4915100005000' }).waitFor();
    // A live event reads the pages shown again: the older ones stay.
    await inbound({ from: FRIEND, body: 'One more, live' });
    await messages.getByText('One more, live').waitFor({ timeout: 15_000 });
    expect(await messages.locator('li.message').count()).toBe(52);
    // Search results come 20 at a time.
    await page.getByLabel('Search messages').fill('message number');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const found = page.getByTestId('found');
    await found.getByText('Message number 50').waitFor({ timeout: 15_000 });
    expect(await found.locator('li').count()).toBe(20);
    for (const shown of [40, 51]) {
      await found.getByRole('button', { name: 'More results' }).click();
      await eventually(async () => (await found.locator('li').count()) === shown, `${shown} results shown`);
    }
    await found.getByRole('button', { name: 'More results' }).waitFor({ state: 'detached' });
    await found.getByText('Message number 0', { exact: true }).waitFor();
    await accessible('a chat read back to its first message');
    await shot('10-paged-inbox');
    await found.getByRole('button', { name: 'Clear' }).click();

    // The warm-up and replies in quiet hours: what the form saves is what the API reads.
    await page.getByLabel('Sends on the first day').fill('10');
    await page.getByLabel('Growth a day (%)').fill('25');
    await page.getByLabel('At most a day').fill('200');
    await page.getByLabel('From', { exact: true }).fill('23:00');
    await page.getByLabel('To', { exact: true }).fill('06:30');
    await page.getByLabel(/Replies to a number that wrote/).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const saved = async () => (await api('GET', '/devices/browser-2/settings', { admin: true })).body.pacing;
    expect(await saved()).toMatchObject({
      warmup: { startPerDay: 10, growthPercent: 25, maxPerDay: 200 },
      quietHours: { from: '23:00', to: '06:30', allowReplies: true },
    });
    // Half a warm-up is the server's 400, said in the notice; nothing changes.
    await page.getByLabel('At most a day').fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page
      .locator('.notice')
      .filter({ hasText: /maxPerDay/ })
      .waitFor();
    expect((await saved()).warmup).toEqual({ startPerDay: 10, growthPercent: 25, maxPerDay: 200 });
    // All three emptied: no warm-up.
    await page.getByLabel('Sends on the first day').fill('');
    await page.getByLabel('Growth a day (%)').fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await eventually(async () => (await saved()).warmup === null, 'the warm-up removed');
    await accessible('the warm-up form');
    await shot('11-warmup');
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
  }, 120_000);

  it("filters a business account's chats by label and names their labels", async () => {
    const api = apiClient(gateway.url);
    const admin = async (method: string, path: string, json?: Record<string, unknown>) => {
      const answer = await api(method, path, { admin: true, ...(json ? { json } : {}) });
      expect(answer.status, `${method} ${path}`).toBeLessThan(300);
      return answer.body;
    };
    // Made on the page, which then shows it.
    await page.getByLabel('Id (optional)').fill('browser-3');
    await page.getByLabel('Name', { exact: true }).first().fill('Business');
    await page.getByLabel('Engine').selectOption('sandbox');
    await page.getByRole('button', { name: 'Create device' }).click();
    await text('new-key', /dk_/);
    await admin('POST', '/devices/browser-3/session/open');
    await admin('POST', '/sandbox/devices/browser-3/scan', { phone: '4915100006000', business: true });
    await eventually(
      async () => (await admin('GET', '/devices/browser-3')).session.state === 'online',
      'the business device online',
    );
    const { labelId } = await admin('POST', '/devices/browser-3/labels', { name: 'Paid', color: 3 });
    await admin('POST', '/sandbox/devices/browser-3/inbound', { from: '4915100006001', body: 'I paid' });
    await admin('POST', '/sandbox/devices/browser-3/inbound', { from: '4915100006002', body: 'Not yet' });
    await eventually(
      async () => (await admin('GET', '/devices/browser-3/chats')).items.length === 2,
      'both chats listed',
    );
    await admin('PUT', `/devices/browser-3/chats/4915100006001/labels/${labelId}`);

    await page
      .getByTestId('chat-4915100006001')
      .locator('.badge')
      .filter({ hasText: 'Paid' })
      .waitFor({ timeout: 15_000 });
    await page.getByTestId('chat-4915100006002').waitFor();
    await page.getByLabel('Show', { exact: true }).selectOption({ label: 'Label: Paid' });
    // The list is read again for the label: the labelled chat alone.
    await page.getByTestId('chat-4915100006001').waitFor({ timeout: 15_000 });
    await eventually(async () => (await page.getByTestId('chats').locator('li').count()) === 1, 'one chat listed');
    expect(await page.getByTestId('chat-4915100006002').count()).toBe(0);
    await accessible('chats filtered by label');
    await shot('12-label-filter');
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
  });
});

describe('dashboard not built', () => {
  it('answers 404 problem+json saying how to build it', async () => {
    const empty = tempDir('dmg-no-dashboard-');
    const gateway = await startGateway(testConfig(), {
      logger: pino({ level: 'silent' }),
      validateResponses: true,
      dashboardDir: empty,
    });
    try {
      const answer = await fetch(`${gateway.url}/dashboard`);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(((await answer.json()) as { detail: string }).detail).toContain('npm run build');
    } finally {
      await gateway.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
