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
  try {
    new URL(text);
  } catch {
    return text;
  }
  // Masked in the text as written: the URL's own serialisation would re-encode, add a `/`… (and the mask of a
  // mask must be the same text, for a URL sent back as answers show it).
  const start = text.indexOf('://');
  if (start === -1) return text;
  const afterScheme = start + 3;
  const authorityEnd = indexOfAny(text, '/?#\\', afterScheme);
  const authority = text.slice(afterScheme, authorityEnd);
  const at = authority.lastIndexOf('@');
  const maskedAuthority = at === -1 ? authority : `${URL_MASK}:${URL_MASK}@${authority.slice(at + 1)}`;
  const rest = text.slice(authorityEnd);
  const queryStart = rest.indexOf('?');
  if (queryStart === -1) return text.slice(0, afterScheme) + maskedAuthority + rest;
  const queryEnd = indexOfAny(rest, '#', queryStart);
  return (
    text.slice(0, afterScheme) +
    maskedAuthority +
    rest.slice(0, queryStart) +
    maskedQuery(rest.slice(queryStart, queryEnd)) +
    rest.slice(queryEnd)
  );
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

/** The first index at or after `from` of any of `characters`; the text's length when none. */
function indexOfAny(text: string, characters: string, from: number): number {
  for (let index = from; index < text.length; index++) if (characters.includes(text[index])) return index;
  return text.length;
}

function safelyDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
