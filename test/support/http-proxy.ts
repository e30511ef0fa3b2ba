/**
 * A tiny forward proxy on 127.0.0.1, as corporate networks have: CONNECT tunnels (what undici's
 * ProxyAgent uses, for http:// and https:// targets alike) and plain-HTTP forwarding of
 * absolute-URL requests. It logs what it was asked for, can demand credentials (407 otherwise),
 * and can refuse every tunnel with a status of the test's choosing, or leave it unanswered.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface ProxyOptions {
  /** `user:password` that Proxy-Authorization must carry (Basic); anything else gets 407. */
  credentials?: string;
  /** Answer every CONNECT with this status instead of a tunnel. */
  refuseWith?: number;
  /** Take every CONNECT and never answer it: a proxy that stalls. */
  stall?: boolean;
  /**
   * No proxy at all: a web server that answers every request 407 and, as Node's own server does,
   * hangs up on a CONNECT (undici's pool then opened the tunnel again at once, for ever).
   */
  notAProxy?: boolean;
  /** Hold every CONNECT until `release()`: a proxy slow to open a tunnel, held as long as a test needs. */
  hold?: boolean;
}

export interface TestProxy {
  url: string;
  port: number;
  /** `CONNECT host:port` or `GET http://…`, in order. */
  log: string[];
  /** The Proxy-Authorization headers received, decoded. */
  credentialsSeen: string[];
  /** Resolves once a CONNECT is held (with `hold`). */
  held(): Promise<void>;
  /** Opens the tunnels held, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

function authorised(req: IncomingMessage, options: ProxyOptions, seen: string[]): boolean {
  const header = req.headers['proxy-authorization'];
  if (typeof header === 'string' && header.startsWith('Basic ')) seen.push(Buffer.from(header.slice(6), 'base64').toString());
  if (options.credentials === undefined) return true;
  return header === `Basic ${Buffer.from(options.credentials).toString('base64')}`;
}

export async function startProxy(options: ProxyOptions = {}): Promise<TestProxy> {
  let holding = options.hold === true;
  const heldTunnels: Array<() => void> = [];
  const holdWaiters: Array<() => void> = [];
  const log: string[] = [];
  const credentialsSeen: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    // Plain forwarding: the request line carries the absolute URL.
    log.push(`${req.method} ${req.url}`);
    if (options.notAProxy === true || !authorised(req, options, credentialsSeen)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    log.push(`CONNECT ${req.url}`);
    client.on('error', () => undefined);
    if (options.notAProxy === true) {
      client.destroy();
      return;
    }
    if (!authorised(req, options, credentialsSeen)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (options.stall) return;
    if (options.refuseWith !== undefined) {
      client.end(`HTTP/1.1 ${options.refuseWith} Refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    if (holding) {
      heldTunnels.push(() => tunnel(req, client, head));
      for (const waiter of holdWaiters.splice(0)) waiter();
      return;
    }
    tunnel(req, client, head);
  });
  const tunnel = (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n'));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log,
    credentialsSeen,
    held: () => new Promise<void>((resolve) => (heldTunnels.length > 0 ? resolve() : holdWaiters.push(resolve))),
    release: () => {
      holding = false;
      for (const open of heldTunnels.splice(0)) open();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
