import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

/** JSON logs on stdout; secrets that could reach a log line are redacted. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'device-messaging-gateway' },
    redact: {
      paths: [
        '*.deviceKey',
        '*.keyHash',
        '*.secret',
        'headers["x-admin-key"]',
        'headers["x-device-key"]',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  });
}
