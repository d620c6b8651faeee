import net from 'node:net';

/**
 * Whether a PostgreSQL server answers at host:port: an SSLRequest (the 8-byte packet every
 * client may open with: length 8, code 80877103) is answered by exactly one byte, `S` or `N`,
 * by PostgreSQL and by nothing that merely listens on the port. No credentials are sent and no
 * session is started. False on refusal, silence past the timeout, or any other answer.
 */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

export function postgresAnswers(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let settled = false;
    const done = (answer: boolean): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write(SSL_REQUEST));
    socket.once('data', (data: Buffer) => done(data.length === 1 && (data[0] === 0x53 || data[0] === 0x4e)));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}
