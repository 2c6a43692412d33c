/**
 * The architecture rules (docs/architecture.md, "Folders and their rules"), checked by `npm test` on the
 * graph of src/ collapsed to one node per top-level folder (and per file at the top of src/).
 */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'Folders depend on each other one way only.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'http-only-from-the-edge',
      comment:
        'Only src/http itself and the composition root (src/gateway.ts) know about HTTP; domain code throws DomainErrors.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http|gateway\\.ts)' },
      to: { path: '^src/http' },
    },
    {
      name: 'engines-know-no-outbox-or-webhooks',
      comment: 'Engines talk to the network; the outbox and the webhooks use them, never the other way round.',
      severity: 'error',
      from: { path: '^src/engines' },
      to: { path: '^src/(outbox|webhooks)' },
    },
    {
      name: 'eventstore-knows-no-domain',
      comment:
        'The event store port and its adapters serve any domain: they import only each other, the settings, the clock and the LIMIT-in-text statements.',
      severity: 'error',
      from: { path: '^src/eventstore' },
      to: { path: '^src/', pathNot: '^src/(eventstore|config\\.ts|time/clock\\.ts|storage/limited-statements\\.ts)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    collapse: '^src/[^/]+',
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
