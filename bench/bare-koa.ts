/**
 * The reference server for the http benchmark: Koa with nothing but a JSON hello-world, started the same
 * way as the gateway (`node --import tsx bench/bare-koa.ts`, PORT and HOST from the environment).
 */
import { createServer } from 'node:http';
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { hello: 'world' };
});

const server = createServer(app.callback());
// The gateway's keep-alive setting, so both servers treat autocannon's connections alike.
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
