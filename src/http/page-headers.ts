/**
 * The headers of the pages the gateway serves itself (the dashboard, the API reference at /docs) and of their
 * files: what the page may load (its Content-Security-Policy), no content sniffing, no framing, no referrer.
 */
export const pageSecurityHeaders = (contentSecurityPolicy: string): Record<string, string> => ({
  'Content-Security-Policy': contentSecurityPolicy,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
});
