/**
 * A webhook receiver's address, checked as every webhook route checks it (/hooks, /webhooks, a device's
 * /webhooks): a destination the outbound guard refuses (private networks unless WEBHOOK_ALLOW_PRIVATE_NETWORKS)
 * is a 400 naming `/url`.
 */
import type { OutboundGuard } from '../net/outbound-guard.js';
import { invalidRequest } from './problem.js';

export function checkReceiverUrl(guard: OutboundGuard, url: string | undefined): void {
  if (url === undefined) return;
  const refusal = guard.refusalOf(url);
  if (!refusal) return;
  const advice = guard.allowPrivateNetworks ? '' : ' (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows private destinations)';
  throw invalidRequest(`body/url ${refusal}${advice}`, [{ path: '/url', message: refusal }]);
}
