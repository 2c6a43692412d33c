/**
 * What a device key may do (docs/api-guide.md, "Scoped keys"). Every route declares the scope it needs
 * (src/http/route.ts); the key made with the device holds all three, and the admin key passes everywhere.
 *
 * The rule for a new route: `read` for every GET (and the streams, media downloads), except a GET whose answer
 * carries a secret (the webhook signing secrets: the hook and the webhooks), which is `manage`; `send` for what sends, edits or deletes
 * messages, the outbox, read receipts and presence; `manage` for every other change (the session, webhooks,
 * settings, groups, profile, blocking, labels, channels, keys); `none` for public routes only.
 */
export const SCOPES = ['read', 'send', 'manage'] as const;

export type Scope = (typeof SCOPES)[number];

/** A route's scope: `none` for the public routes, which take no key. */
export type RouteScope = Scope | 'none';

export const ALL_SCOPES: readonly Scope[] = SCOPES;

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
