import Type from 'typebox';

/** What only the admin key is shown: what a caller without it could use to pick its attack (version) or time it. */
const ADMIN_ONLY = 'With the admin key only.';

export const HealthSchema = Type.Object({
  status: Type.Enum(['ok', 'degraded']),
  version: Type.Optional(Type.String({ description: ADMIN_ONLY })),
  uptimeSeconds: Type.Optional(Type.Number({ minimum: 0, description: ADMIN_ONLY })),
  store: Type.Object({ kind: Type.Enum(['sqlite', 'eventstoredb']), ok: Type.Boolean() }),
  disk: Type.Object(
    {
      freeBytes: Type.Optional(Type.Integer({ minimum: 0, description: `Free bytes in DATA_DIR. ${ADMIN_ONLY}` })),
      low: Type.Boolean({ description: 'Below DISK_FREE_MIN_BYTES.' }),
      writeFailing: Type.Boolean({
        description:
          'The last write failed (the disk full, or the store failing to write), and none has succeeded since.',
      }),
    },
    { description: 'The disk of DATA_DIR.' },
  ),
  cluster: Type.Optional(
    Type.Object(
      {
        memberId: Type.String({ description: 'This process among the members.' }),
        pid: Type.Integer(),
        devicesOwned: Type.Integer({ minimum: 0, description: 'Devices this process runs (holds the lease of).' }),
        members: Type.Array(
          Type.Object({ memberId: Type.String(), devices: Type.Integer({ minimum: 0 }), self: Type.Boolean() }),
          {
            description:
              'Live members (heartbeating within LEASE_TIMEOUT) and how many devices each runs, as this process sees them.',
          },
        ),
        subscription: Type.Optional(
          Type.Object(
            {
              state: Type.Enum(['live', 'behind']),
              behindMs: Type.Integer({
                minimum: 0,
                description: 'How long the oldest heartbeat of this process has not come back through it.',
              }),
            },
            {
              description:
                'The subscription to the log this process follows the others by: `behind` (stalled, down or slow) once its own heartbeat has not come back through it for half of LEASE_TIMEOUT; meanwhile it takes no device.',
            },
          ),
        ),
      },
      {
        description: `Several processes (GATEWAY_PROCESSES > 1 or GATEWAY_CLUSTER=true): which process answered and what it runs. ${ADMIN_ONLY}`,
      },
    ),
  ),
});
