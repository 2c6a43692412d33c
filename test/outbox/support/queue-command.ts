/** The n-th text message queued on a device's outbox, with ids derived from n (the outbox stream tests). */
export const queueCommand = (deviceId: string, n: number) =>
  ({
    type: 'QueueMessage',
    deviceId,
    message: {
      outboxId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      waMessageId: `3EB0${String(n).padStart(18, '0')}`,
      to: '4915112345678',
      content: { kind: 'text' as const, text: `m${n}` },
      createdAt: new Date().toISOString(),
    },
  }) as const;
