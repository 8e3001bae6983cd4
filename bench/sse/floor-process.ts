/**
 * The floor under the api's memory figures: the same HTTP server (api/src/http/server.ts),
 * Koa and security headers, answering every request with an idle text/event-stream response
 * and doing nothing else. What an open stream costs the api beyond this is the api's own.
 * With SSE_FLOOR=node, the bare Node HTTP server alone (no Koa, no headers of ours): what
 * any stream on Node's HTTP server costs, whatever runs above it.
 */
import type { RequestListener } from 'node:http';
import Koa from 'koa';
import { loadConfig } from '../../api/src/config.ts';
import { createHttpServer } from '../../api/src/http/server.ts';
import { securityHeaders } from '../../api/src/http/security-headers.ts';
import { serveMeasurements } from './measured-process.ts';

const config = loadConfig();
const koa = new Koa();
koa.use(securityHeaders());
koa.use(async (ctx) => {
  ctx.respond = false;
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  ctx.req.socket.setTimeout(0);
  ctx.res.writeHead(200);
  ctx.res.write(': connected\n\n');
});
const bareNode: RequestListener = (req, res) => {
  req.socket.setTimeout(0);
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
  res.write(': connected\n\n');
};
const server = createHttpServer(process.env.SSE_FLOOR === 'node' ? bareNode : koa.callback(), config);
await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
serveMeasurements({ server, close: async () => {} });
