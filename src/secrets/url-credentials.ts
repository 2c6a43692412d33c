/**
 * Credentials in URLs a user gives (webhook receivers, media): the user information (`user:password@`)
 * and the values of query parameters whose names look like credentials (`token`, `access_token`, `api_key`,
 * `sig`, `X-Amz-Signature`…). Answers and history show them as `***`. A secret in the path (a token as a
 * path segment) cannot be told from the rest of the path and is left as it is.
 */
export const URL_MASK = '***';

/** Query parameter names taken for credentials (a substring, any case): over-masking is the safe mistake. */
const CREDENTIAL_PARAMETER = /token|secret|pass|pwd|key|auth|sig|credential|session|hmac/i;

/** Absolute URLs within a longer text (an error message, a message body). */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/** The URL with its credentials replaced by `***`; anything that is no absolute URL, as it is. */
export function maskUrlCredentials(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  const hasUserInfo = url.username !== '' || url.password !== '';
  const query = maskedQuery(url.search);
  if (!hasUserInfo && query === url.search) return text;
  // Rebuilt by hand: the URL's own setters would re-encode every other parameter.
  const userInfo = hasUserInfo ? `${URL_MASK}:${URL_MASK}@` : '';
  const authority = url.host ? `//${userInfo}${url.host}` : '';
  return `${url.protocol}${authority}${url.pathname}${query}${url.hash}`;
}

/** Every absolute URL in `text` with its credentials masked. */
export function maskUrlsIn(text: string): string {
  return text.includes('://') ? text.replace(URL_IN_TEXT, maskUrlCredentials) : text;
}

/** Whether the URL shows `***` where credentials go: an answer's URL sent back, not a real one. */
export function hasMaskedCredentials(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.username === URL_MASK || url.password === URL_MASK) return true;
  return url.search
    .slice(1)
    .split('&')
    .some((pair) => {
      const [name = '', value] = pair.split('=', 2);
      return value === URL_MASK && CREDENTIAL_PARAMETER.test(safelyDecoded(name));
    });
}

function maskedQuery(search: string): string {
  if (search.length <= 1) return search;
  const pairs = search
    .slice(1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      if (equals === -1 || !CREDENTIAL_PARAMETER.test(safelyDecoded(name))) return pair;
      return `${name}=${URL_MASK}`;
    });
  return `?${pairs.join('&')}`;
}

function safelyDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
