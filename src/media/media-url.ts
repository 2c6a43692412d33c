/** Where a message's kept media is served (GET /devices/:deviceId/messages/:waMessageId/media): received and sent media alike. */
export const mediaUrlOf = (deviceId: string, waMessageId: string) =>
  `/devices/${encodeURIComponent(deviceId)}/messages/${encodeURIComponent(waMessageId)}/media`;
