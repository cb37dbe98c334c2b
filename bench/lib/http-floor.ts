/**
 * The baseline of the CPU a MIT costs at a fixed rate (`bench mit` d): a bare node:http server in a
 * process of its own, answering a fixed body, driven at the same rate by the same load generator.
 * At a few hundred requests a second most of a request's CPU is per event — the wake-ups, the
 * loopback's network stack, the system calls — and it differs between hosts several times over;
 * beside this floor, measured in the same run, a MIT's own cost (one request, one callback sent,
 * its commits) reads as a ratio.
 */
import { spawn } from 'node:child_process';

// CommonJS, run as given: a server that answers every request with the fixed body once it is read.
const SERVER_SOURCE = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end('{"state":"PENDING"}');
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpuMicros: user + system });
  } else if (message === 'close') server.close(() => process.exit(0));
});
`;

export interface HttpFloor {
  url: string;
  /** CPU time of its process so far (user + system), µs. */
  cpuMicros(): Promise<number>;
  close(): Promise<void>;
}

export async function startHttpFloor(): Promise<HttpFloor> {
  const child = spawn(process.execPath, ['-e', SERVER_SOURCE], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  /** The child's next message; rejects should it exit first. */
  const next = <T>(): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const died = (code: number | null) => reject(new Error(`the bare HTTP server exited (${code})`));
      child.once('exit', died);
      child.once('message', (m) => {
        child.off('exit', died);
        resolve(m as T);
      });
    });
  const { port } = await next<{ port: number }>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    async cpuMicros() {
      const answer = next<{ cpuMicros: number }>();
      child.send('cpu');
      return (await answer).cpuMicros;
    },
    async close() {
      child.send('close');
      await exited;
    },
  };
}
