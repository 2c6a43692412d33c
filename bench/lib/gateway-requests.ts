/**
 * Requests of the benches to a child gateway (bench/lib/child.ts) as a device or as the admin, sandbox devices
 * brought online, and the progress lines a bench prints while it runs.
 */
import { type GatewayChild, waitForSessionState } from './child.js';

/**
 * A request with the device's key, or the admin key when none is given; fails unless the answer is
 * `expectStatus` (any 2xx when undefined). Answers the JSON body.
 */
export async function gatewayRequest<T = unknown>(
  gateway: GatewayChild,
  method: string,
  path: string,
  body?: unknown,
  expectStatus?: number,
  deviceKey?: string,
): Promise<T> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      ...(deviceKey ? { 'x-device-key': deviceKey } : { 'x-admin-key': gateway.adminKey }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const ok = expectStatus === undefined ? response.ok : response.status === expectStatus;
  if (!ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Scans tried before a `503 busy` scan fails the bench. */
const SCAN_TRIES = 5;

/**
 * The phone scans the device's code (202). A `503 busy` (no code on show at that moment: the device is moving between
 * processes as they join, or its code is being renewed) is tried again after its Retry-After, as a client would.
 */
export async function scanCode(gateway: GatewayChild, id: string, phone: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    const response = await fetch(`${gateway.url}/sandbox/devices/${id}/scan`, {
      method: 'POST',
      headers: { 'x-admin-key': gateway.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ phone }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (response.status === 202) return;
    const busy = response.status === 503 && (JSON.parse(text) as { code?: string }).code === 'busy';
    if (!busy || tries >= SCAN_TRIES)
      throw new Error(`POST /sandbox/devices/${id}/scan answered ${response.status}: ${text.slice(0, 300)}`);
    const retryAfter = Number(response.headers.get('retry-after') ?? '1');
    await new Promise((resolve) => setTimeout(resolve, (Number.isFinite(retryAfter) ? retryAfter : 1) * 1_000));
  }
}

/** Creates a sandbox device, opens it and scans its QR code with `phone`; resolves once it is online. */
export async function onlineSandboxDevice(
  gateway: GatewayChild,
  id: string,
  phone: string,
  hook?: { url: string; events: string[] },
): Promise<{ id: string; key: string }> {
  const { deviceKey } = await gateway.adminRequest<{ deviceKey: string }>(
    'POST',
    '/devices',
    { id, name: id, engine: 'sandbox' },
    201,
  );
  await gateway.adminRequest('POST', `/devices/${id}/session/open`);
  await waitForSessionState(gateway, id, 'qr');
  await scanCode(gateway, id, phone);
  await waitForSessionState(gateway, id, 'online');
  if (hook) await gateway.adminRequest('PUT', `/devices/${id}/hooks`, hook, 200);
  return { id, key: deviceKey };
}

/** A line on stderr while a bench runs (stdout is its report). */
export function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}
