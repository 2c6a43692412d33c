/**
 * The decider of an output's stream (`output-<outputId>`): made once, changed, deleted; its position only moves
 * forward (a record at or behind it, from a process that published the same events again, records nothing); an
 * error is recorded when it differs from the last one (a streak of the same failure is one event), and null when
 * publishing works again. Nothing is recorded for an output deleted or never made, but a change or deletion of
 * one is refused (`not_found`), as a second deletion is.
 */
import type { Decider } from '../commands/decider.js';
import { DomainError } from '../errors/domain-error.js';
import { OUTPUT_EVENT_TYPES, type OutputChange, type OutputCreatedData, type OutputEvent } from './output-events.js';

export interface OutputState {
  /** The output as made and changed since; undefined before it is made. */
  output: OutputCreatedData | undefined;
  deleted: boolean;
  /** The recorded position: every selected event up to it is confirmed (0: none yet). */
  position: number;
  lastError: string | null;
  lastErrorAt: string | null;
}

export type OutputCommand =
  | { type: 'CreateOutput'; output: OutputCreatedData }
  | { type: 'ChangeOutput'; outputId: string; change: OutputChange; at: string }
  | { type: 'DeleteOutput'; outputId: string; at: string }
  | { type: 'RecordPosition'; outputId: string; position: number; at: string }
  | { type: 'RecordError'; outputId: string; error: string | null; at: string };

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const outputNotFound = (outputId: string) => new DomainError('not_found', `output "${outputId}" does not exist`);

export const outputDecider: Decider<OutputState, OutputCommand, OutputEvent> = {
  eventTypes: OUTPUT_EVENT_TYPES,
  initialState: () => ({ output: undefined, deleted: false, position: 0, lastError: null, lastErrorAt: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'OutputCreated':
        return { ...state, output: event.data, position: event.data.startAfter };
      case 'OutputChanged': {
        if (!state.output) return state;
        const { outputId: _id, changedAt: _at, devices, ...change } = event.data;
        const output: OutputCreatedData = { ...state.output, ...change };
        if (devices === null) delete output.devices;
        else if (devices !== undefined) output.devices = devices;
        // A URL without credentials has no other form: the one of the URL before goes.
        if (change.url !== undefined && change.sealedUrl === undefined) delete output.sealedUrl;
        return { ...state, output };
      }
      case 'OutputDeleted':
        return { ...state, deleted: true };
      case 'OutputPositionRecorded':
        return { ...state, position: Math.max(state.position, event.data.position) };
      case 'OutputErrorRecorded':
        return { ...state, lastError: event.data.error, lastErrorAt: event.data.at };
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateOutput':
        return state.output ? [] : [{ type: 'OutputCreated', data: command.output }];
      case 'ChangeOutput': {
        if (!state.output || state.deleted) throw outputNotFound(command.outputId);
        const changed: OutputChange = {};
        for (const key of Object.keys(command.change) as Array<keyof OutputChange>) {
          const value = command.change[key];
          if (value === undefined || key === 'url' || key === 'sealedUrl') continue;
          const current = key === 'devices' ? (state.output.devices ?? null) : state.output[key];
          if (!same(value, current)) Object.assign(changed, { [key]: value });
        }
        // The writer names a URL only when the URL itself changed (its shown form may stay: other credentials).
        const { url, sealedUrl } = command.change;
        if (url !== undefined) {
          changed.url = url;
          if (sealedUrl !== undefined) changed.sealedUrl = sealedUrl;
        }
        if (Object.keys(changed).length === 0) return [];
        return [{ type: 'OutputChanged', data: { outputId: command.outputId, ...changed, changedAt: command.at } }];
      }
      case 'DeleteOutput':
        if (!state.output || state.deleted) throw outputNotFound(command.outputId);
        return [{ type: 'OutputDeleted', data: { outputId: command.outputId, deletedAt: command.at } }];
      case 'RecordPosition':
        if (!state.output || state.deleted || command.position <= state.position) return [];
        return [
          {
            type: 'OutputPositionRecorded',
            data: { outputId: command.outputId, position: command.position, recordedAt: command.at },
          },
        ];
      case 'RecordError':
        if (!state.output || state.deleted || state.lastError === command.error) return [];
        return [
          { type: 'OutputErrorRecorded', data: { outputId: command.outputId, error: command.error, at: command.at } },
        ];
    }
  },
};
