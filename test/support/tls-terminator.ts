/**
 * HTTPS in front of the emulator (which speaks plain HTTP): a TLS server on 127.0.0.1 that pipes
 * each connection to it, with a certificate made at test time by openssl, from a private
 * certificate authority (or self-signed), for `localhost` and 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer } from 'node:tls';

export interface Certificates {
  /** The private authority's certificate, in PEM: what NODE_EXTRA_CA_CERTS would name. */
  caFile: string;
  key: Buffer;
  cert: Buffer;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A private CA and a leaf it signed (or, `selfSigned`, a leaf that signed itself), written to `dir`. */
export function makeCertificates(dir: string, options: { selfSigned?: boolean } = {}): Certificates {
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  if (options.selfSigned) {
    openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.pem', '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
    return { caFile: join(dir, 'leaf.pem'), key: readFileSync(join(dir, 'leaf.key')), cert: readFileSync(join(dir, 'leaf.pem')) };
  }
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=orgform test CA']);
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost']);
  openssl(dir, ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '2', '-extfile', 'san.ext']);
  return { caFile: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'leaf.key')), cert: readFileSync(join(dir, 'leaf.pem')) };
}

export interface TlsTerminator {
  /** `https://localhost:PORT`. */
  url: string;
  close(): Promise<void>;
}

export async function startTlsTerminator(upstreamPort: number, certificates: Certificates): Promise<TlsTerminator> {
  const sockets = new Set<Socket>();
  const server = createServer({ key: certificates.key, cert: certificates.cert }, (client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  // A refused handshake is the client's business; the server carries on.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://localhost:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
