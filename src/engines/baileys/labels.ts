/**
 * WhatsApp Business labels on a Baileys socket: made, changed and deleted (`addLabel`, a `label_edit` app-state
 * patch) and put on chats or taken off (`addChatLabel` / `removeChatLabel`), all through `chatModify`, as Baileys'
 * own helpers do. Baileys emits its local echo of each (`labels.edit`, `labels.association`): `own` learns each
 * change so the echo is not reported as the phone's.
 */
import type { AuthenticationCreds } from 'baileys';
import { EngineError, type LabelOperations } from '../engine.js';
import type { BaileysSocket } from './baileys-socket.js';
import { jidOfChat } from './jid.js';
import { type OwnChatChanges, chatLabelEchoKey, labelEchoKey } from './own-chat-changes.js';

type LabelSocket = BaileysSocket & Required<Pick<BaileysSocket, 'chatModify'>>;

/**
 * The phone's platform as the pairing named it: WhatsApp Business apps are `smba` (Android) and `smbi` (iPhone);
 * the consumer apps `android`, `iphone`, ….
 */
export const isBusinessPlatform = (creds: Pick<AuthenticationCreds, 'platform'>): boolean =>
  creds.platform?.toLowerCase().startsWith('smb') === true;

export function baileysLabelOperations(
  socket: LabelSocket,
  requireOnline: () => void,
  own: OwnChatChanges,
  creds: () => Pick<AuthenticationCreds, 'platform'>,
): LabelOperations {
  const attempt = async (what: string, key: string, run: () => Promise<unknown>) => {
    requireOnline();
    try {
      await own.expecting([key], run);
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('engine_error', `${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return {
    isBusiness: () => isBusinessPlatform(creds()),
    edit: ({ labelId, name, color, deleted }) =>
      // A label belongs to no chat: Baileys' addLabel passes a JID it never uses; so does this.
      attempt(`changing the label ${labelId}`, labelEchoKey(labelId), () =>
        socket.chatModify({ addLabel: { id: labelId, name, color, deleted } }, ''),
      ),
    labelChat: (chatId, labelId, action) => {
      const jid = jidOfChat(chatId);
      return attempt(`labelling the chat ${chatId}`, chatLabelEchoKey(jid, labelId), () =>
        socket.chatModify(action === 'add' ? { addChatLabel: { labelId } } : { removeChatLabel: { labelId } }, jid),
      );
    },
  };
}
