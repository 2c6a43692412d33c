import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Caller } from '../../auth/authenticator.js';

export interface RequestState {
  requestId: string;
  log: Logger;
  /** Set by the route once the key is checked; undefined on public routes. */
  caller?: Caller;
}

/** A caller's X-Request-Id is kept when it is short and plain; otherwise one is made up. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The child logger is made on first use: most requests never log, and a child costs more than the route. */
class LazyRequestState implements RequestState {
  caller?: Caller;
  private child: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly logger: Logger,
  ) {}

  get log(): Logger {
    return (this.child ??= this.logger.child({ requestId: this.requestId }));
  }
}

/** Gives every request an id, echoes it in X-Request-Id and binds it to a child logger. */
export function requestId(logger: Logger): Middleware<RequestState> {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const id = ACCEPTABLE_ID.test(given) ? given : randomUUID();
    ctx.state = new LazyRequestState(id, logger);
    ctx.set('X-Request-Id', id);
    const started = performance.now();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('debug')) {
        ctx.state.log.debug(
          {
            method: ctx.method,
            url: ctx.url,
            status: ctx.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
          },
          'request',
        );
      }
    }
  };
}
