import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { LineTooLongError } from '../src/errors';
import { liveProcessGroups } from '../src/index';
import { StdioServerTransport, type StdioServerTransportOptions } from '../src/transport/stdio-server-transport';
import { alive } from './helpers/everything';
import { secret } from './helpers/fakes';

const node = process.execPath;
const transports: StdioServerTransport[] = [];

function start(script: string, options: Partial<StdioServerTransportOptions> = {}) {
  const transport = new StdioServerTransport({ command: node, args: ['-e', script], ...options });
  transports.push(transport);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let closed = false;
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e);
  transport.onclose = () => (closed = true);
  return { transport, messages, errors, closed: () => closed };
}

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

// Writes its whole environment as one JSON-RPC notification, then waits for stdin to close.
const PRINT_ENV = `process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'env', params: { ...process.env } }) + '\\n'); process.stdin.resume();`;

describe('StdioServerTransport', () => {
  it('Gate 16 at unit level: the child sees only the synthesized tier plus the one declared variable', async () => {
    process.env.VEETBOT_GATE16_SENTINEL = 'sentinel-value-that-must-not-leak';
    try {
      const { transport, messages } = start(PRINT_ENV, { credential: { name: 'ACME_TOKEN', value: secret('s3cr3t-token') } });
      await transport.start();
      await until(() => messages.length === 1);
      const env = (messages[0] as { params: Record<string, string> }).params;
      expect(Object.keys(env).sort()).toEqual(['ACME_TOKEN', 'HOME', 'LANG', 'PATH', 'TZ']);
      expect(env).toMatchObject({ ACME_TOKEN: 's3cr3t-token', LANG: 'C.UTF-8', TZ: 'UTC', PATH: '/usr/local/bin:/usr/bin:/bin' });
      expect(env.HOME).not.toBe(process.env.HOME);
      expect(JSON.stringify(env)).not.toContain('sentinel-value-that-must-not-leak');
    } finally {
      delete process.env.VEETBOT_GATE16_SENTINEL;
    }
  });

  it('the credential never reaches argv (/proc/<pid>/cmdline)', async () => {
    const { transport, messages } = start(PRINT_ENV, { credential: { name: 'ACME_TOKEN', value: secret('argv-canary-98765') } });
    await transport.start();
    await until(() => messages.length === 1);
    const cmdline = readFileSync(`/proc/${transport.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('process.stdout.write');
    expect(cmdline).not.toContain('argv-canary-98765');
  });

  it('refuses a tier-0 variable name even if configuration let one through', async () => {
    const transport = new StdioServerTransport({ command: node, args: ['-e', ''], credential: { name: 'LD_PRELOAD', value: secret('x') } });
    await expect(transport.start()).rejects.toMatchObject({ code: 'mcp.config.auth_name_tier0' });
  });

  it('captures stderr into a bounded ring, never passing it through', async () => {
    const { transport } = start(`process.stderr.write('a'.repeat(300000) + 'THE-END'); process.stdin.resume();`, { stderrMaxBytes: 1024 });
    await transport.start();
    await until(() => transport.stderrBytesSeen >= 300007);
    const tail = transport.stderrTail();
    expect(Buffer.byteLength(tail)).toBe(1024);
    expect(tail.endsWith('THE-END')).toBe(true);
  });

  it('a stdout line with no newline is capped: the transport closes with LineTooLongError and kills the child', async () => {
    const { transport, errors, closed } = start(`const chunk = 'x'.repeat(65536); setInterval(() => process.stdout.write(chunk), 1);`, {
      maxLineBytes: 256 * 1024,
    });
    await transport.start();
    const pid = transport.pid!;
    await until(closed, 10_000);
    expect(errors.some((e) => e instanceof LineTooLongError)).toBe(true);
    expect(transport.failure).toBeInstanceOf(LineTooLongError);
    await until(() => !alive(pid));
  });

  it('parses newline-delimited JSON-RPC across chunk boundaries and skips malformed lines', async () => {
    const { transport, messages, errors } = start(
      `const m = JSON.stringify({ jsonrpc: '2.0', method: 'a', params: { x: 'y'.repeat(100000) } }); process.stdout.write(m.slice(0, 5000)); setTimeout(() => { process.stdout.write(m.slice(5000) + '\\nnot json\\n' + JSON.stringify({ jsonrpc: '2.0', method: 'b' }) + '\\r\\n'); }, 50); process.stdin.resume();`,
    );
    await transport.start();
    await until(() => messages.length === 2);
    expect(messages.map((m) => (m as { method: string }).method)).toEqual(['a', 'b']);
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['mcp.transport.message_invalid']);
  });

  it('sends messages as lines on stdin', async () => {
    const { transport, messages } = start(`process.stdin.on('data', (d) => process.stdout.write(d));`);
    await transport.start();
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await until(() => messages.length === 1);
    expect(messages[0]).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
  });

  it('close kills the whole process group, grandchildren included', async () => {
    const { transport, messages, closed } = start(
      `const c = require('child_process').spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' }); process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'child', params: { pid: c.pid } }) + '\\n'); process.stdin.resume();`,
      { killGraceMs: 200 },
    );
    await transport.start();
    await until(() => messages.length === 1);
    const grandchild = (messages[0] as unknown as { params: { pid: number } }).params.pid;
    const pid = transport.pid!;
    expect(alive(grandchild)).toBe(true);
    expect(liveProcessGroups()).toContain(pid);
    await transport.close();
    expect(closed()).toBe(true);
    await until(() => !alive(grandchild) && !alive(pid));
    expect(liveProcessGroups()).not.toContain(pid);
  });

  it('a send after the child exited is refused as not dispatched', async () => {
    const { transport, closed } = start(`process.exit(0)`);
    await transport.start();
    await until(closed);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toMatchObject({
      code: 'mcp.transport.closed',
      dispatched: false,
    });
  });

  it('a command that does not exist fails to start, not dispatched', async () => {
    const transport = new StdioServerTransport({ command: '/nonexistent/server-binary' });
    await expect(transport.start()).rejects.toMatchObject({ code: 'mcp.transport.connect_failed' });
  });
});
