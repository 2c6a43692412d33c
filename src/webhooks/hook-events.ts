/**
 * The hook configuration of a device is part of its registry stream (`device-<id>`, deviceStream()),
 * beside its creation and deletion: one writer, one expected revision, and a deleted device takes its
 * hooks with it. DeviceRegistry and the devices read model ignore these types.
 *
 * HooksConfigured carries the whole configuration, signing secret included: the log is the only place
 * it is kept. Anything that shows these events to people must redact `data.secret`.
 */
import type { WebhookEventKind } from './envelope.js';

export interface HookConfiguration {
  url: string;
  events: WebhookEventKind[];
  /** `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
  secret: string;
}

export type HookEvent =
  | { type: 'HooksConfigured'; data: { deviceId: string } & HookConfiguration }
  | { type: 'HooksRemoved'; data: { deviceId: string } };

export const HOOK_EVENT_TYPES: ReadonlySet<string> = new Set<HookEvent['type']>(['HooksConfigured', 'HooksRemoved']);
