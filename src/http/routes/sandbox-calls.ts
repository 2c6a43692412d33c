import type { Supervisor } from '../../actors/supervisor.js';
import type { SandboxEngine } from '../../engines/sandbox/sandbox-engine.js';
import type { ReadModelProgress } from '../../projections/projection-runner.js';
import { sessionNotOnline } from '../../errors/domain-error.js';
import { StoreUnavailableError } from '../../eventstore/event-store.js';
import type { StorageHealth } from '../../storage/storage-health.js';
import { insufficientStorage, problemOf } from '../error-table.js';
import { conflict } from '../problem.js';
import type { TSchema } from 'typebox';
import { type HandlerInput, type RequestDevice, type ResponseSpec, type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { AcceptedSchema } from '../schemas/sandbox.js';
import type { InboundMessage } from '../../engines/engine.js';
import type { SeenMessages } from '../../outbox/commands/seen-messages.js';
import type { BodyGate } from '../body/body-gate.js';
import { type HeldMedia, SandboxMedia } from '../../engines/sandbox/sandbox-media.js';
import type { ChatActivity } from '../../engines/engine.js';
import type { SandboxHistoryChunk } from '../../engines/sandbox/sandbox-engine.js';
import { type OwnerCalls } from '../../cluster/owner-calls.js';
import { type Clock, systemClock } from '../../time/clock.js';
import { untilShown } from '../../actors/until-shown.js';

export const tag = 'Sandbox';

export interface SandboxRouteDeps {
  sessions: Supervisor;
  sandbox: SandboxEngine;
  projections: ReadModelProgress;
  /** The time a scan waits for a code by (default: the system clock). */
  clock?: Clock;
  /**
   * The simulated network of a device is in the process that runs it: with several processes, what the phone and
   * the network do is carried to the device's owner and answered from there (src/cluster/owner-calls.ts).
   */
  calls: OwnerCalls;
  /** What a quoted message said (`quotedMessageId`). */
  seen?: SeenMessages;
  /** Whether writes fail now (src/storage/storage-health.ts). */
  storage?: Pick<StorageHealth, 'writeFailure'>;
  /** The inbound route takes media as base64 up to this many bytes; its body is parsed after authentication. */
  inboundMedia?: {
    limit: number;
    uploadDir: string;
    gate: BodyGate;
    /** Whether the device will try again later to download a recorded message's media (it has not stored it). */
    downloadPending?: (deviceId: string, waMessageId: string) => Promise<boolean>;
  };
}

export const NOT_FOUND = { description: 'No such device.' };
export const SANDBOX_NOT_ONLINE = {
  description: 'Not a sandbox device (`not_sandbox_device`), or the session is not online (`session_not_online`).',
};

/** The owner's word on a device after the network acted: its state once it reacted, and where that is in the log. */
export interface Reaction {
  state?: string;
  position?: number;
  /** No actor for the device there (arriving, or handed on): no state says why nothing is on show. */
  moving?: true;
}

/** The calls and helpers of the sandbox routes, made once per gateway (each call is defined once). */
export type SandboxCalls = ReturnType<typeof sandboxCalls>;

export function sandboxCalls({
  sessions,
  sandbox,
  projections,
  calls,
  inboundMedia,
  storage,
  clock = systemClock,
}: SandboxRouteDeps) {
  /** 409 `not_sandbox_device` for devices of another engine (the router answered 404 for unknown ones). */
  const requireSandboxDevice = ({ id, view }: RequestDevice) => {
    if (view.engine !== 'sandbox')
      throw conflict('not_sandbox_device', `device "${id}" uses the ${view.engine} engine, not the sandbox`);
  };
  /** Refused for want of an online session, in the words of the state its owner (or else the log) knows. */
  // While writes fail, a session that is not online is most likely so because of it (its intake held, or its
  // reconnect not recorded): the store's answer says when to try again, as a send's does.
  const notOnline = (device: RequestDevice, reaction: Reaction = {}) => {
    const failure = storage?.writeFailure;
    if (failure === 'space') return insufficientStorage();
    if (failure === 'store') return problemOf(new StoreUnavailableError('the store cannot record now'))!;
    return sessionNotOnline(reaction.state ?? device.sessionState());
  };
  /** At the owner: the state the device reacted with to what the network just did. */
  const reactionOf = async (deviceId: string): Promise<Reaction> => {
    const settled = await sessions.settled(deviceId);
    const state = settled?.state ?? sessions.state(deviceId);
    return { ...(state ? { state } : {}), ...(settled?.position ? { position: settled.position } : {}) };
  };
  /** The state as the owner knows it (undefined where it does not run the device). */
  const stateHere = (deviceId: string): Reaction => {
    const state = sessions.state(deviceId);
    return state ? { state } : {};
  };
  /** The device has reacted to what the network just did; answer its state, readable everywhere (read your writes). */
  const answer = async (device: RequestDevice, reaction: Reaction) => {
    if (reaction.position) await projections.settle(reaction.position);
    return { status: 202, body: { state: reaction.state ?? device.sessionState() } };
  };

  /** At the owner: the phone's `attempt` at the code the device shows, tried again while one is on its way. */
  const untilCodeShown = <O extends string>(
    deviceId: string,
    shows: 'qr' | 'pairing',
    none: O,
    attempt: () => Promise<O>,
  ) => untilShown(sessions, clock, deviceId, shows, attempt, (outcome) => outcome !== none);
  // What the phone and the network do, each run by the device's owner (where its simulated connection is).
  const scan = calls.define('sandbox.scan', 'once', async (deviceId: string, phone: string, business?: boolean) => {
    const tried = await untilCodeShown(deviceId, 'qr', 'no_qr', () => sandbox.scan(deviceId, phone, business === true));
    return tried.outcome === 'paired' ? { outcome: tried.outcome, ...(await reactionOf(deviceId)) } : tried;
  });
  const enterCode = calls.define('sandbox.pair', 'once', async (deviceId: string, code: string) => {
    const tried = await untilCodeShown(deviceId, 'pairing', 'no_code', () => sandbox.enterPairingCode(deviceId, code));
    return tried.outcome === 'paired' ? { outcome: tried.outcome, ...(await reactionOf(deviceId)) } : tried;
  });
  const receive = calls.define(
    'sandbox.inbound',
    'once',
    async (deviceId: string, message: InboundMessage, held: HeldMedia | undefined) => {
      const media = held === undefined ? undefined : SandboxMedia.described(held);
      let accepted: Awaited<ReturnType<SandboxEngine['inbound']>> | undefined;
      try {
        accepted = await sandbox.inbound(deviceId, media ? { ...message, downloadMedia: () => media.open() } : message);
      } finally {
        // Recorded (or refused): the bytes are kept only for the device's later download attempts, if any.
        const laterTries =
          media !== undefined &&
          accepted !== undefined &&
          ((await inboundMedia?.downloadPending?.(deviceId, message.waMessageId)) ?? false);
        await media?.release(laterTries);
      }
      return accepted ? { accepted } : stateHere(deviceId);
    },
  );
  /** A call of the network that a device takes only while online: whether it did, and its state where it runs. */
  const defineNetworkCall = <A>(name: string, run: (deviceId: string, arg: A) => boolean | Promise<boolean>) =>
    calls.define(name, 'once', async (deviceId: string, arg: A) => ({
      done: await run(deviceId, arg),
      ...stateHere(deviceId),
    }));
  const act = defineNetworkCall('sandbox.activity', (deviceId, activity: ChatActivity) =>
    sandbox.activity(deviceId, activity),
  );
  const syncHistory = defineNetworkCall('sandbox.history', (deviceId, chunk: SandboxHistoryChunk) =>
    sandbox.history(deviceId, chunk),
  );
  const ring = defineNetworkCall('sandbox.call', (deviceId, call: { callId: string; from: string; isVideo: boolean }) =>
    sandbox.call(deviceId, call),
  );
  const viewStatus = defineNetworkCall('sandbox.status-view', (deviceId, view: { from: string; waMessageId: string }) =>
    sandbox.statusView(deviceId, view.from, view.waMessageId),
  );
  const reactToChannelPost = defineNetworkCall(
    'sandbox.channel-reaction',
    (deviceId, reaction: { channelId: string; waMessageId: string; from: string; emoji: string }) =>
      sandbox.channelReaction(deviceId, reaction),
  );
  /**
   * A route where the network reaches an online sandbox device: 404 and 409 as every such route; `reach` passes each
   * call's outcome to `reached` (a device not online is refused), and its answer (default `{ accepted: true }`) is the 202.
   */
  const networkRoute = <B extends TSchema>(spec: {
    path: string;
    operationId: string;
    summary: string;
    description: string;
    body: B;
    /** The 202 when it is not "on its way", and further answers. */
    responses?: Record<number, ResponseSpec>;
    reach(
      input: HandlerInput<typeof DeviceParams, undefined, B>,
      reached: (outcome: { done: boolean } & Reaction) => void,
    ): Promise<unknown>;
  }): RouteSpec =>
    defineRoute<typeof DeviceParams, undefined, B>({
      method: 'post',
      path: spec.path,
      operationId: spec.operationId,
      tag,
      summary: spec.summary,
      description: spec.description,
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: spec.body,
      responses: {
        202: { description: 'On its way to the device.', schema: AcceptedSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
        ...spec.responses,
      },
      async handler(input) {
        requireSandboxDevice(input.device);
        const reached = ({ done, ...reaction }: { done: boolean } & Reaction) => {
          if (!done) throw notOnline(input.device, reaction);
        };
        const answer = await spec.reach(input, reached);
        return { status: 202, body: answer ?? { accepted: true } };
      },
    });
  const disconnect = calls.define('sandbox.disconnect', 'once', async (deviceId: string) => {
    const done = sandbox.disconnect(deviceId);
    return { done, ...(done ? await reactionOf(deviceId) : stateHere(deviceId)) };
  });
  const deafen = calls.define('sandbox.deafen', 'repeatable', async (deviceId: string, on: boolean) => {
    sandbox.deafen(deviceId, on);
    return { deaf: on };
  });
  const unlink = calls.define('sandbox.logout', 'once', async (deviceId: string) => {
    const outcome = await sandbox.logout(deviceId);
    return { outcome, ...(outcome === 'unlinked' ? await reactionOf(deviceId) : stateHere(deviceId)) };
  });

  return {
    requireSandboxDevice,
    notOnline,
    answer,
    networkRoute,
    scan,
    enterCode,
    receive,
    act,
    syncHistory,
    ring,
    viewStatus,
    reactToChannelPost,
    disconnect,
    deafen,
    unlink,
  };
}
