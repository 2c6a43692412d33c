import type {
  ChannelReport,
  ChatActivity,
  Contact,
  DisconnectKind,
  EngineEvents,
  GroupReport,
  HistoryChunk,
  InboundMessage,
  LinkedAccount,
  Receipt,
} from '../../../../src/engines/engine.js';

/** EngineEvents that remember every call, in order, for assertions. */
export interface RecordingEvents extends EngineEvents {
  log: string[];
  qrs: Array<{ code: string; expiresAt: Date }>;
  onlines: LinkedAccount[];
  disconnects: Array<{ kind: DisconnectKind; detail: string }>;
  inbounds: InboundMessage[];
  receipts: Receipt[];
  contactBatches: Contact[][];
  activities: ChatActivity[];
  groupReports: GroupReport[];
  channelReports: ChannelReport[];
  histories: HistoryChunk[];
  pairingCodes: Array<{ code: string; expiresAt: Date }>;
}

export function recordingEvents(): RecordingEvents {
  const events: RecordingEvents = {
    log: [],
    qrs: [],
    onlines: [],
    disconnects: [],
    inbounds: [],
    receipts: [],
    contactBatches: [],
    activities: [],
    groupReports: [],
    channelReports: [],
    histories: [],
    pairingCodes: [],
    async history(chunk) {
      events.log.push('history');
      events.histories.push(chunk);
    },
    pairingCode(code, expiresAt) {
      events.log.push('pairingCode');
      events.pairingCodes.push({ code, expiresAt });
    },
    async groups(report) {
      events.log.push(`group:${report.kind}`);
      events.groupReports.push(report);
    },
    async channels(report) {
      events.log.push(`channel:${report.kind}`);
      events.channelReports.push(report);
    },
    async activity(activity) {
      events.log.push(`activity:${activity.kind}`);
      events.activities.push(activity);
    },
    qr(code, expiresAt) {
      events.log.push('qr');
      events.qrs.push({ code, expiresAt });
    },
    online(account) {
      events.log.push('online');
      events.onlines.push(account);
    },
    disconnected(kind, detail) {
      events.log.push(`disconnected:${kind}`);
      events.disconnects.push({ kind, detail });
    },
    async inbound(message) {
      events.log.push('inbound');
      events.inbounds.push(message);
    },
    async receipt(receipt) {
      events.log.push('receipt');
      events.receipts.push(receipt);
    },
    async contacts(contacts) {
      events.log.push('contacts');
      events.contactBatches.push(contacts);
    },
  };
  return events;
}
