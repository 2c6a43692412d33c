/**
 * The account's profile and blocklist (GET/PATCH /profile, /contacts/:number/block, /contacts/blocked),
 * through the one writer of `account-<deviceId>` (account-decider.ts): a change is checked, made on the
 * network, then recorded before the answer (as groups are, src/groups/group-commands.ts); the blocklist is
 * refreshed from the network each time the session comes online.
 */
import { CommandHandler } from '../commands/command-handler.js';
import { sessionNotOnline } from '../errors/domain-error.js';
import { translatingEngineFailures } from '../engines/engine-failure.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { type AccountEvent, accountStream } from './account-events.js';
import type { AccountOperations, OwnProfile } from './account-operations.js';
import { type AccountCommand, type AccountState, accountDecider } from './account-decider.js';
import type { BlocklistReadModel } from './blocklist-read-model.js';

export interface AccountCommandsDeps {
  store: EventStore;
  blocklist: BlocklistReadModel;
  projections: ReadModelProgress;
  operations(deviceId: string): AccountOperations | undefined;
  /** The account's number, while online. */
  me(deviceId: string): string | undefined;
  /** The session's state as this process knows it, for the words of a refusal. */
  sessionState?(deviceId: string): string | undefined;
}

export interface Profile extends OwnProfile {
  phone: string;
}

export class AccountCommands {
  private readonly handler: CommandHandler<AccountState, AccountCommand, AccountEvent>;

  constructor(private readonly deps: AccountCommandsDeps) {
    this.handler = new CommandHandler({
      store: deps.store,
      decider: accountDecider,
      cacheSize: 1_000,
      snapshots: { every: 100 },
    });
  }

  async profile(deviceId: string): Promise<Profile> {
    const { operations, me } = this.online(deviceId);
    return { phone: me, ...(await operations.profile()) };
  }

  async changeProfile(deviceId: string, change: { name?: string; about?: string }): Promise<Profile> {
    const { operations } = this.online(deviceId);
    if (change.name !== undefined) await operations.setName(change.name);
    if (change.about !== undefined) await operations.setAbout(change.about);
    await this.record(deviceId, { type: 'ChangeProfile', deviceId, ...change });
    return this.profile(deviceId);
  }

  async block(deviceId: string, number: string, blocked: boolean): Promise<void> {
    const { operations } = this.online(deviceId);
    if (blocked) await operations.block(number);
    else await operations.unblock(number);
    await this.record(deviceId, { type: blocked ? 'Block' : 'Unblock', deviceId, number });
  }

  /** From the read model: works in every session state. */
  blocked(deviceId: string): string[] {
    return this.deps.blocklist.list(deviceId);
  }

  /** The network's blocklist, recorded when it differs (each time the session comes online). */
  async refresh(deviceId: string): Promise<void> {
    const operations = this.deps.operations(deviceId);
    if (!operations) return;
    await this.record(deviceId, { type: 'RefreshBlocklist', deviceId, numbers: await operations.blocked() });
  }

  private async record(deviceId: string, command: AccountCommand): Promise<void> {
    const handled = await this.handler.handle(accountStream(deviceId), command);
    if (handled.position > 0) await this.deps.projections.settle(handled.position);
  }

  private online(deviceId: string): { operations: AccountOperations; me: string } {
    const operations = this.deps.operations(deviceId);
    const me = this.deps.me(deviceId);
    const sessionState = () => this.deps.sessionState?.(deviceId);
    if (!operations || me === undefined) throw sessionNotOnline(sessionState());
    return { operations: translatingEngineFailures(operations, sessionState), me };
  }
}
