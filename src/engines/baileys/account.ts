/**
 * The account through Baileys: the profile (updateProfileName, updateProfileStatus, fetchStatus,
 * profilePictureUrl), other numbers' about texts (fetchStatus) and blocking (updateBlockStatus,
 * fetchBlocklist), as the engine port's AccountOperations.
 */
import { type AccountOperations, EngineError } from '../engine.js';
import type { BaileysSocket } from './baileys-socket.js';
import { statusCodeOf } from './disconnect-kind.js';
import { jidOfPhone, phoneOfJid } from './jid.js';

export type BaileysAccountSocket = Required<
  Pick<
    BaileysSocket,
    'updateProfileName' | 'updateProfileStatus' | 'fetchStatus' | 'updateBlockStatus' | 'fetchBlocklist'
  >
> &
  Pick<BaileysSocket, 'profilePictureUrl'>;

/** WhatsApp answers "no picture" as item-not-found and "hidden" as not-authorized. */
const NOTHING_TO_SHOW = new Set([401, 403, 404]);

function refusalOf(error: unknown): number | undefined {
  const data = (error as { data?: unknown } | null)?.data;
  return typeof data === 'number' ? data : statusCodeOf(error);
}

function accountError(error: unknown, doing: string): EngineError {
  if (error instanceof EngineError) return error;
  const code = statusCodeOf(error);
  return new EngineError(
    code === 428 || code === 408 ? 'not_connected' : 'engine_error',
    `${doing}: ${(error as Error)?.message ?? String(error)}`,
  );
}

/** The about text in a fetchStatus answer: `[{ id, status: { status, setAt } }]`; null when there is none. */
export function aboutOf(
  list: Array<{ id: string; [protocol: string]: unknown }> | undefined,
  jid: string,
): string | null {
  const entry = list?.find((item) => item.id === jid) ?? list?.[0];
  const status = (entry?.status as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'string' && status.length > 0 ? status : null;
}

export function baileysAccountOperations(
  socket: BaileysAccountSocket,
  account: () => { jid: string; name?: string },
  requireOnline: () => void,
): AccountOperations {
  const run = async <T>(doing: string, call: () => Promise<T>): Promise<T> => {
    requireOnline();
    try {
      return await call();
    } catch (error) {
      throw accountError(error, doing);
    }
  };
  const about = async (jid: string): Promise<string | null> => {
    try {
      return aboutOf(await socket.fetchStatus(jid), jid);
    } catch (error) {
      if (NOTHING_TO_SHOW.has(refusalOf(error) ?? 0)) return null;
      throw error;
    }
  };
  return {
    profile: () =>
      run('reading the profile', async () => {
        const { jid, name } = account();
        const avatarUrl = await socket.profilePictureUrl(jid, 'image').catch((error: unknown) => {
          if (NOTHING_TO_SHOW.has(refusalOf(error) ?? 0)) return undefined;
          throw error;
        });
        return { ...(name ? { name } : {}), about: await about(jid), avatarUrl: avatarUrl ?? null };
      }),
    setName: (name) => run('changing the name', () => socket.updateProfileName(name)),
    setAbout: (text) => run('changing the about text', () => socket.updateProfileStatus(text)),
    about: (number) => run(`reading the about text of ${number}`, () => about(jidOfPhone(number))),
    block: (number) => run(`blocking ${number}`, () => socket.updateBlockStatus(jidOfPhone(number), 'block')),
    unblock: (number) => run(`unblocking ${number}`, () => socket.updateBlockStatus(jidOfPhone(number), 'unblock')),
    blocked: () =>
      run('reading the blocklist', async () => {
        const jids = await socket.fetchBlocklist();
        return jids.map((jid) => phoneOfJid(jid)).filter((n): n is string => n !== undefined);
      }),
  };
}
