/**
 * Label writes of a WhatsApp Business account (POST/PATCH/DELETE /labels, PUT/DELETE /chats/:chatId/labels/:labelId):
 * made on the network first (the account's app state), then recorded as the phone's changes are (LabelUpdated,
 * ChatLabelChanged on `inbox-<deviceId>`), so `label.updated` and `chat.labels` say the same whoever made the change.
 */
import type { EngineConnection, LabelEdit, LabelOperations } from '../engines/engine.js';
import { engineSupports, translatingEngineFailures } from '../engines/engine-failure.js';
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { orderedUuid } from '../eventstore/event-id.js';
import type { InboxCommands } from '../inbox/inbox-commands.js';
import type { ChatEvent } from '../inbox/inbox-events.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import type { LabelView } from './chat-labels.js';
import type { MessageIndex } from './message-index.js';

export interface LabelCommandsDeps {
  inbox: Pick<InboxCommands, 'record'>;
  index: Pick<MessageIndex, 'labels' | 'labelIds' | 'hasChat' | 'chat' | 'chats'>;
  connection: (deviceId: string) => EngineConnection | undefined;
  sessionState?: (deviceId: string) => string | undefined;
  projections: ReadModelProgress;
}

/** A chat's labels taken off before its label is deleted, this many chats at a time. */
const CHATS_PER_PAGE = 100;

export class LabelCommands {
  /** Per device: a new label's id is the next free one, so creations of one device run one after another. */
  private readonly creating = new Map<string, Promise<void>>();

  constructor(private readonly deps: LabelCommandsDeps) {}

  /** Makes a label; answers it with the id it got. */
  create(deviceId: string, label: { name: string; color?: number }): Promise<LabelView> {
    const previous = this.creating.get(deviceId) ?? Promise.resolve();
    const made = previous.then(async () => {
      const ops = this.labelOps(deviceId);
      const created: LabelEdit = {
        labelId: nextLabelId(this.deps.index.labelIds(deviceId)),
        name: label.name,
        color: label.color ?? 0,
        deleted: false,
      };
      await this.edit(deviceId, ops, created);
      return { labelId: created.labelId, name: created.name, color: created.color };
    });
    // The next creation waits for this one, whatever its outcome (the caller hears of a failure).
    const settled = made.then(
      () => undefined,
      () => undefined,
    );
    this.creating.set(deviceId, settled);
    void settled.then(() => {
      if (this.creating.get(deviceId) === settled) this.creating.delete(deviceId);
    });
    return made;
  }

  /** Renames or recolours a label; answers it as it is now. */
  async update(deviceId: string, labelId: string, patch: { name?: string; color?: number }): Promise<LabelView> {
    const ops = this.labelOps(deviceId);
    const current = this.existing(deviceId, labelId);
    const changed = { ...current, ...patch };
    await this.edit(deviceId, ops, { ...changed, deleted: false });
    return changed;
  }

  /** Deletes a label, taking it off the chats that carry it first (as the phone does). */
  async remove(deviceId: string, labelId: string): Promise<void> {
    const ops = this.labelOps(deviceId);
    const current = this.existing(deviceId, labelId);
    for (;;) {
      const page = this.deps.index.chats(deviceId, { limit: CHATS_PER_PAGE, filter: { label: labelId } });
      if (page.items.length === 0) break;
      for (const chat of page.items) await this.changeChat(deviceId, ops, chat.chatId, labelId, 'remove');
    }
    await this.edit(deviceId, ops, { ...current, deleted: true });
  }

  /** Puts a label on a chat (`add`) or takes it off (`remove`). */
  async labelChat(deviceId: string, chatId: string, labelId: string, action: 'add' | 'remove'): Promise<void> {
    const ops = this.labelOps(deviceId);
    this.existing(deviceId, labelId);
    if (!this.deps.index.hasChat(deviceId, chatId))
      throw new DomainError('chat_not_found', `the device has no chat ${chatId}`);
    // Already so: nothing to make on WhatsApp, nothing to record, no second chat.labels.
    const carries = this.deps.index.chat(deviceId, chatId)?.labels.includes(labelId) ?? false;
    if (carries === (action === 'add')) return;
    await this.changeChat(deviceId, ops, chatId, labelId, action);
  }

  private async edit(deviceId: string, ops: LabelOperations, label: LabelEdit): Promise<void> {
    await ops.edit(label);
    await this.recordChange(deviceId, { type: 'LabelUpdated', data: { deviceId, ...label } });
  }

  private async changeChat(
    deviceId: string,
    ops: LabelOperations,
    chatId: string,
    labelId: string,
    action: 'add' | 'remove',
  ): Promise<void> {
    await ops.labelChat(chatId, labelId, action);
    await this.recordChange(deviceId, { type: 'ChatLabelChanged', data: { deviceId, chatId, labelId, action } });
  }

  private async recordChange(deviceId: string, event: ChatEvent): Promise<void> {
    const position = await this.deps.inbox.record(deviceId, event, orderedUuid());
    await this.deps.projections.settle(position);
  }

  private existing(deviceId: string, labelId: string): LabelView {
    const label = this.deps.index.labels(deviceId).find((l) => l.labelId === labelId);
    if (!label) throw new DomainError('label_not_found', `the account has no label ${labelId}`);
    return label;
  }

  /** The engine's label operations of an online business account (`409` otherwise). */
  private labelOps(deviceId: string): LabelOperations {
    const connection = this.deps.connection(deviceId);
    const sessionState = () => this.deps.sessionState?.(deviceId);
    if (!connection) throw sessionNotOnline(sessionState());
    const ops = translatingEngineFailures(engineSupports(connection.labels, 'labels'), sessionState);
    if (!ops.isBusiness())
      throw new DomainError('not_business_account', 'labels need a WhatsApp Business account; this one is not');
    return ops;
  }
}

/** WhatsApp's label ids are small numbers: the next after the highest the account ever had. */
export function nextLabelId(ids: readonly string[]): string {
  const numbers = ids.map(Number).filter((n) => Number.isSafeInteger(n) && n >= 0);
  return String(Math.max(0, ...numbers) + 1);
}
