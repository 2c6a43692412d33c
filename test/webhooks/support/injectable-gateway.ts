/**
 * The real gateway (startGateway, as src/main.ts runs it) in a child process that also appends events to
 * its store when the parent asks over IPC: domain events as the engines append them, in a process that a
 * test can kill with SIGKILL.
 */
import { loadConfig } from '../../../src/config.js';
import type { NewEvent } from '../../../src/eventstore/event-store.js';
import { startGateway } from '../../../src/gateway.js';

export interface AppendRequest {
  seq: number;
  stream: string;
  events: NewEvent[];
}

export type ChildMessage = { seq: number; position: number } | { seq: number; error: string };

const send = (message: ChildMessage) => process.send!(message);
const gateway = await startGateway(loadConfig());
process.on('message', (request: AppendRequest) => {
  gateway.store.append(request.stream, request.events).then(
    (result) => send({ seq: request.seq, position: result.position }),
    (error: unknown) => send({ seq: request.seq, error: String(error) }),
  );
});
