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
  // Masked in the text as written: the URL's own serialisation would re-encode, add a `/`… (and the mask of a
  // mask must be the same text, for a URL sent back as answers show it). A text the URL parser refuses is masked
  // the same way as long as it has the shape of one (`scheme://…`): an error message may quote such a URL.
  const start = text.indexOf('://');
  if (start === -1 || !/^[a-z][a-z0-9+.-]*$/i.test(text.slice(0, start))) return text;
  const afterScheme = start + 3;
  const authorityEnd = indexOfAny(text, '/?#\\', afterScheme);
  const authority = text.slice(afterScheme, authorityEnd);
  const at = authority.lastIndexOf('@');
  const maskedAuthority = at === -1 ? authority : `${URL_MASK}:${URL_MASK}@${authority.slice(at + 1)}`;
  const rest = text.slice(authorityEnd);
  const hash = rest.indexOf('#');
  const beforeHash = hash === -1 ? rest : rest.slice(0, hash);
  const queryStart = beforeHash.indexOf('?');
  const path = queryStart === -1 ? beforeHash : beforeHash.slice(0, queryStart);
  const query = queryStart === -1 ? '' : `?${maskedParameters(beforeHash.slice(queryStart + 1))}`;
  // A fragment may carry parameters too (OAuth's `#access_token=…`).
  const fragment = hash === -1 ? '' : `#${maskedParameters(rest.slice(hash + 1))}`;
  return text.slice(0, afterScheme) + maskedAuthority + path + query + fragment;
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
  return `${url.search.slice(1)}&${url.hash.slice(1)}`.split(/[&;]/).some((pair) => {
    const [name = '', value] = pair.split('=', 2);
    return value === URL_MASK && CREDENTIAL_PARAMETER.test(safelyDecoded(name));
  });
}

/** `name=value` pairs (split at `&` or `;`) with the values of credential-named ones masked, separators kept. */
function maskedParameters(parameters: string): string {
  return parameters.replace(/([^&;=]*)=([^&;]*)/g, (pair, name: string) =>
    CREDENTIAL_PARAMETER.test(safelyDecoded(name)) ? `${name}=${URL_MASK}` : pair,
  );
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
