/**
 * A tiny TCP forwarder for outage tests: the service talks to the database through it, and the
 * test cuts and restores the line without touching the (shared) database server.
 *
 *   cut()      destroys every open connection (the peer sees a reset) and resets new ones at once
 *   restore()  forwards new connections again
 *   close()    stops listening and destroys everything
 */
import net from 'node:net';

export interface TcpProxy {
  /** The local port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Connections forwarded so far (tests check that the service reconnected). */
  readonly forwarded: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let cut = false;
  let forwarded = 0;

  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    // A reset peer is what this proxy is for: errors end the pair, they are not failures.
    socket.on('error', () => undefined);
  };

  const server = net.createServer((client) => {
    track(client);
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    forwarded++;
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    port,
    get forwarded() {
      return forwarded;
    },
    cut() {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore() {
      cut = false;
    },
    async close() {
      cut = true;
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
