/** Setup file of the `esdb` vitest project: the test servers of a test file stop with it. */
import { afterAll } from 'vitest';
import { stopTestStores } from './test-store.js';

afterAll(async () => {
  await stopTestStores();
});
