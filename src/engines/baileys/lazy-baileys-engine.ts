/**
 * The Baileys engine as the registry holds it: Baileys itself, slow and large to load
 * (docs/notes/performance.md), is imported on first use, so a gateway whose devices all use the sandbox never
 * loads it.
 */
import type { Engine, EngineConnection, EngineEvents } from '../engine.js';
import type { BaileysEngine, BaileysEngineOptions } from './baileys-engine.js';

export function createLazyBaileysEngine(options: BaileysEngineOptions): Engine {
  let loaded: Promise<BaileysEngine> | undefined;
  const engine = () =>
    (loaded ??= import('./baileys-engine.js').then(({ createBaileysEngine }) => createBaileysEngine(options)));
  return {
    name: 'baileys',
    connect: async (deviceId: string, events: EngineEvents): Promise<EngineConnection> =>
      (await engine()).connect(deviceId, events),
    forget: async (deviceId: string) => (await engine()).forget(deviceId),
    // Nothing to close when Baileys was never loaded.
    close: async () => (loaded ? (await loaded).close() : undefined),
  };
}
