/**
 * The outputs read model (src/outputs/outputs-read-model.ts), fed events directly: every broker output with its
 * configuration as changed since, its recorded position and last error, oldest first; a deleted output gone.
 */
import { describe, it } from 'vitest';
import type { OutputCreatedData, OutputEvent } from '../../src/outputs/output-events.js';
import { OutputsReadModel } from '../../src/outputs/outputs-read-model.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

const spec = readModelSpecification<OutputEvent, OutputsReadModel>((db) => new OutputsReadModel(db));
const AT = '2026-03-01T10:00:00.000Z';
const config = (outputId: string): OutputCreatedData => ({
  outputId,
  type: 'amqp',
  url: 'amqp://***@broker:5672',
  sealedUrl: 'sealed',
  exchange: 'gateway',
  events: ['*'],
  createdAt: AT,
  startAfter: 7,
});
const stream = (outputId: string) => ({ streamId: `output-${outputId}` });
const created = (outputId: string): GivenEvent<OutputEvent> => ({
  type: 'OutputCreated',
  data: config(outputId),
  ...stream(outputId),
});
const position = (outputId: string, value: number): GivenEvent<OutputEvent> => ({
  type: 'OutputPositionRecorded',
  data: { outputId, position: value, recordedAt: AT },
  ...stream(outputId),
});
const error = (outputId: string, value: string | null): GivenEvent<OutputEvent> => ({
  type: 'OutputErrorRecorded',
  data: { outputId, error: value, at: AT },
  ...stream(outputId),
});
const removed = (outputId: string): GivenEvent<OutputEvent> => ({
  type: 'OutputDeleted',
  data: { outputId, deletedAt: AT },
  ...stream(outputId),
});
const recorded = (outputId: string, more: object = {}) => ({
  output: config(outputId),
  deleted: false,
  position: 7,
  lastError: null,
  lastErrorAt: null,
  ...more,
});
const ids = (model: OutputsReadModel) => model.list().map((output) => output.output.outputId);

describe('outputs read model', () => {
  it('lists every output oldest first, with its position and last error, over several batches', () => {
    spec
      .given(created('b'), position('b', 20))
      .given(created('a'), error('b', 'connection refused'), position('b', 12))
      .then(ids, ['b', 'a'])
      .then((model) => model.get('a'), recorded('a'))
      .then(
        (model) => model.get('b'),
        recorded('b', { position: 20, lastError: 'connection refused', lastErrorAt: AT }),
      )
      .given(error('b', null), position('b', 30))
      .then((model) => model.get('b'), recorded('b', { position: 30, lastErrorAt: AT }))
      .then((model) => model.get('c'), undefined);
  });

  it('applies a change field by field: devices null publishes every device again, a new URL drops the sealed one', () => {
    spec
      .given(created('a'))
      .given({
        type: 'OutputChanged',
        data: { outputId: 'a', changedAt: AT, events: ['message.received'], devices: ['d1'] },
        ...stream('a'),
      })
      .then((model) => model.get('a')?.output, { ...config('a'), events: ['message.received'], devices: ['d1'] })
      .given({
        type: 'OutputChanged',
        data: { outputId: 'a', changedAt: AT, url: 'amqp://broker:5672', devices: null },
        ...stream('a'),
      })
      .then((model) => model.get('a')?.output, {
        outputId: 'a',
        type: 'amqp',
        url: 'amqp://broker:5672',
        exchange: 'gateway',
        events: ['message.received'],
        createdAt: AT,
        startAfter: 7,
      })
      .then((model) => model.get('a')?.output && 'sealedUrl' in model.get('a')!.output, false)
      .then(ids, ['a']);
  });

  it('a deleted output is gone, also what its subscriber records after; the others stay', () => {
    spec
      .given(created('a'), created('b'))
      .given(position('a', 9), removed('a'))
      .given(position('a', 10), error('a', 'late'))
      .then((model) => model.get('a'), undefined)
      .then(ids, ['b']);
  });
});
