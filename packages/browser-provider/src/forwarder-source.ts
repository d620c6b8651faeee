/**
 * The forwarder that runs INSIDE the sandbox (docs/adr/0079), under the host's node binary:
 * it listens on 127.0.0.1 in the empty network namespace, joins each connection to the proxy's
 * unix socket (bind-mounted), then starts chromium with the inherited descriptors (playwright's
 * pipe on 3 and 4) and `--proxy-server` pointing at itself. `<-loopback>` sends even loopback
 * through the proxy. It exits with chromium. Plain CommonJS, no dependency: it is a file the
 * host writes into a folder only the host can write, bound read-only.
 */
export const FORWARDER_SOURCE = `'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, executable, ...args] = process.argv.slice(2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const child = spawn(executable, [...args, '--proxy-server=http://127.0.0.1:' + port, '--proxy-bypass-list=<-loopback>'], {
    stdio: ['inherit', 'inherit', 'inherit', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => process.exit(code === null ? 1 : code));
  child.on('error', () => process.exit(127));
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(name, () => child.kill('SIGKILL'));
});
`;
