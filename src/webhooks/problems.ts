import { Problem } from '../http/problem.js';

/** API.md: a device without a hook configuration answers 404 `hooks_not_configured` on the hook routes. */
export const hooksNotConfigured = (deviceId: string) => new Problem(404, 'hooks_not_configured', `device "${deviceId}" has no hook configuration`);
