import { describe, expect, it } from 'vitest';
import { outputDecider } from '../../src/outputs/output-decider.js';
import type { OutputCreatedData, OutputEvent } from '../../src/outputs/output-events.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(outputDecider);
const at = '2026-01-01T00:00:00.000Z';
const output: OutputCreatedData = {
  outputId: 'o1',
  type: 'amqp',
  url: 'amqp://***:***@broker:5672',
  sealedUrl: 'sealed:v1:abc',
  exchange: 'x',
  routingKey: '{deviceId}.{event}',
  events: ['*'],
  createdAt: at,
  startAfter: 10,
};
const created: OutputEvent = { type: 'OutputCreated', data: output };
const deleted: OutputEvent = { type: 'OutputDeleted', data: { outputId: 'o1', deletedAt: at } };
const recorded = (position: number): OutputEvent => ({
  type: 'OutputPositionRecorded',
  data: { outputId: 'o1', position, recordedAt: at },
});

describe('output decider', () => {
  it('starts at the log head it was made at and only moves its position forward', () => {
    spec.given([created]).when({ type: 'RecordPosition', outputId: 'o1', position: 10, at }).thenNothing();
    spec
      .given([created])
      .when({ type: 'RecordPosition', outputId: 'o1', position: 12, at })
      .then([recorded(12)]);
    spec
      .given([created, recorded(20)])
      .when({ type: 'RecordPosition', outputId: 'o1', position: 15, at })
      .thenNothing();
  });

  it('records nothing for an output deleted or never made, and refuses to change or delete one never made', () => {
    spec.given([created, deleted]).when({ type: 'RecordPosition', outputId: 'o1', position: 50, at }).thenNothing();
    spec.given([created, deleted]).when({ type: 'RecordError', outputId: 'o1', error: 'x', at }).thenNothing();
    spec.given([]).when({ type: 'RecordPosition', outputId: 'o1', position: 50, at }).thenNothing();
    spec.given([]).when({ type: 'DeleteOutput', outputId: 'o1', at }).thenRefused('not_found');
    spec
      .given([created, deleted])
      .when({ type: 'ChangeOutput', outputId: 'o1', change: {}, at })
      .thenRefused('not_found');
    spec.given([created, deleted]).when({ type: 'DeleteOutput', outputId: 'o1', at }).thenRefused('not_found');
  });

  it('records an error once per streak, and its end', () => {
    const failing: OutputEvent = { type: 'OutputErrorRecorded', data: { outputId: 'o1', error: 'refused', at } };
    spec.given([created]).when({ type: 'RecordError', outputId: 'o1', error: 'refused', at }).then([failing]);
    spec.given([created, failing]).when({ type: 'RecordError', outputId: 'o1', error: 'refused', at }).thenNothing();
    spec
      .given([created, failing])
      .when({ type: 'RecordError', outputId: 'o1', error: null, at })
      .then([{ type: 'OutputErrorRecorded', data: { outputId: 'o1', error: null, at } }]);
    spec.given([created]).when({ type: 'RecordError', outputId: 'o1', error: null, at }).thenNothing();
  });

  it('records the fields that change; a URL named by the writer always, with its sealed form', () => {
    spec
      .given([created])
      .when({ type: 'ChangeOutput', outputId: 'o1', change: { exchange: 'x', events: ['*'] }, at })
      .thenNothing();
    spec
      .given([created])
      .when({
        type: 'ChangeOutput',
        outputId: 'o1',
        change: { url: output.url, sealedUrl: 'sealed:v1:new', exchange: 'y', devices: null },
        at,
      })
      .then([
        {
          type: 'OutputChanged',
          data: { outputId: 'o1', url: output.url, sealedUrl: 'sealed:v1:new', exchange: 'y', changedAt: at },
        },
      ]);
    const changed: OutputEvent = {
      type: 'OutputChanged',
      data: { outputId: 'o1', url: 'amqp://broker:5672', devices: ['d1'], changedAt: at },
    };
    const { output: after } = spec.given([created, changed]).state;
    expect(after?.sealedUrl).toBeUndefined();
    expect(after?.devices).toEqual(['d1']);
  });
});
