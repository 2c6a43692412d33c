/**
 * For durability tests, as the factory of `vi.mock('node:fs/promises', …)`: the module as it is, except that every
 * file handle's sync() is recorded in `synced` (the path it was opened with), and `overrides` replace functions
 * (to inject faults). Nothing here may import node:fs/promises itself: it is loaded while that module is mocked.
 */
type FsPromises = typeof import('node:fs/promises');

/** The paths whose handles were fsynced, in order. */
export const synced: string[] = [];

export function recordingSyncs(original: FsPromises, overrides: Partial<FsPromises> = {}): FsPromises {
  const open = (async (...args: Parameters<FsPromises['open']>) => {
    const handle = await original.open(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      synced.push(String(args[0]));
      return sync();
    };
    return handle;
  }) as FsPromises['open'];
  const mocked = { open, ...overrides };
  return { ...original, ...mocked, default: { ...original, ...mocked } } as FsPromises;
}
