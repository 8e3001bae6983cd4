import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './wait.ts';

export interface Nginx {
  /** http://127.0.0.1:<port>, the proxy's address. */
  url: string;
  /** A blank page of the proxy's origin, as a front end served beside the api: scripts on it call the api through the proxy. */
  appPage: string;
  /** nginx's error log so far (what it says about upstream connections). */
  errors(): Promise<string>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/**
 * Debian's nginx (hack/test.sh installs it) on loopback as a reverse proxy of `upstream`, the
 * way a deployment puts it in front of the api: HTTP/1.1 with a pool of keep-alive upstream
 * connections (a request may go into any idle one), streams unbuffered. One process (no
 * master), everything under its own temp directory; stopped by close().
 */
export async function startNginx(upstream: string): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'cutroom-nginx-'));
  await mkdir(join(dir, 'temp'));
  const port = await freePort();
  const target = new URL(upstream);
  const config = `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/temp/body;
  proxy_temp_path ${dir}/temp/proxy;
  fastcgi_temp_path ${dir}/temp/fastcgi;
  uwsgi_temp_path ${dir}/temp/uwsgi;
  scgi_temp_path ${dir}/temp/scgi;
  upstream api {
    server ${target.hostname}:${target.port};
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    # the front end's page, served by the proxy beside the api as a deployment does: a document of this origin
    location = /app/ {
      default_type text/html;
      return 200 '<!doctype html><title>Cutroom</title>';
    }
    location / {
      proxy_pass http://api;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      # the client address the test gives each lane (the api reads the last hop), as an edge proxy would set it
      proxy_set_header X-Forwarded-For $http_x_forwarded_for;
      proxy_buffering off;
      proxy_read_timeout 60s;
    }
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), config);
  const child: ChildProcess = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    return (await accepting(port)) ? true : undefined;
  }, 'nginx listening', 10_000);
  return {
    url: `http://127.0.0.1:${port}`,
    appPage: `http://127.0.0.1:${port}/app/`,
    errors: () => readFile(join(dir, 'error.log'), 'utf8').catch(() => ''),
    close: async () => {
      if (child.exitCode === null) {
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
