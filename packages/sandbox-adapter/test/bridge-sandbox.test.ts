import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { bridgeCallId, ToolResultItem } from '@veetbot/domain';
import type { BridgeTurn, SandboxRequest } from '@veetbot/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeServer, BubblewrapSandbox } from '../src/index';
import { recordingHandler, sha256 } from './bridge-fixture';
import { LIMITS, makeDataDir } from './sandbox-fixture';

// docs/adr/0038: a real node program inside the real sandbox (bubblewrap) reaches the bridge
// through the mounted client; nothing else of the host is reachable.
const data = makeDataDir();
const sandbox = new BubblewrapSandbox({ stateDir: data.stateDir, workspaceRoot: data.workspaceRoot });
const bridge = new BridgeServer();
const hostDir = path.join(data.root, 'bridge');
const NODE = '/usr/bin/node';
// V8 reserves far more address space than it uses (docs/adr/0037, "some JITs").
const NODE_LIMITS = { ...LIMITS, memoryBytes: 8 * 1024 * 1024 * 1024 };

let listener: Server;
let port = 0;
let tcpConnections = 0;

beforeAll(async () => {
  expect(await sandbox.availability()).toEqual({ available: true });
  listener = createServer((socket) => {
    tcpConnections += 1;
    socket.end('hello');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  data.cleanup();
});

function turnOf(script: string, stepNumber = 1): BridgeTurn {
  return { tenantId: 'tenant', runId: 'run-a', stepNumber, scriptHash: sha256(script) };
}

async function runScript(
  script: string,
  turn: { readOnlyBinds: SandboxRequest['readOnlyBinds']; platformEnvironment: Readonly<Record<string, string>> },
) {
  writeFileSync(path.join(data.workspace, 'script.mjs'), script);
  return sandbox.run(
    {
      argv: [NODE, '/workspace/script.mjs'],
      workspaceHostPath: data.workspace,
      limits: NODE_LIMITS,
      ...(turn.readOnlyBinds === undefined ? {} : { readOnlyBinds: turn.readOnlyBinds }),
      platformEnvironment: turn.platformEnvironment,
    },
    new AbortController().signal,
  );
}

/** Every host process's command line that holds `needle`. */
function commandLinesHolding(needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (text.includes(needle)) found.push(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe('a sandboxed program calls tools through the bridge', () => {
  it('two calls: ordinals 0 and 1, call ids from the script hash, outcomes printed; the token is on no command line', async () => {
    const script = [
      "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
      "const first = await tools.call('demo.echo', { x: 1 });",
      "const second = await tools.call('demo.echo', { x: 1 });",
      'console.log(JSON.stringify({ first, second, env: Object.keys(process.env).sort() }));',
    ].join('\n');
    const { handler: echo, calls } = recordingHandler();
    let tokenOnCommandLine: string[] = ['not checked'];
    let token = '';
    const turn = await bridge.openTurn(
      turnOf(script),
      async (call, signal) => {
        // While the sandbox runs: bwrap got the token through a pipe (--args), not argv.
        if (call.ordinal === 0) tokenOnCommandLine = commandLinesHolding(token);
        return echo(call, signal);
      },
      { hostDir },
    );
    token = turn.token;
    try {
      const result = await runScript(script, turn);
      expect(result.stderr.text).toBe('');
      expect(result.ending).toBe('exited');
      expect(result.exitCode).toBe(0);
      expect(calls.map((call) => call.ordinal)).toEqual([0, 1]);
      expect(calls.map((call) => call.callId)).toEqual([bridgeCallId(sha256(script), 0), bridgeCallId(sha256(script), 1)]);
      expect(calls.map((call) => [call.toolName, call.arguments])).toEqual([
        ['demo.echo', { x: 1 }],
        ['demo.echo', { x: 1 }],
      ]);
      const printed = JSON.parse(result.stdout.text) as { first: unknown; second: unknown; env: string[] };
      const first = ToolResultItem.parse(printed.first);
      expect(first).toEqual(printed.first);
      expect(first.call_id).toBe(calls[0]?.callId);
      expect(first.outcome.status).toBe('succeeded');
      expect(ToolResultItem.parse(printed.second).call_id).toBe(calls[1]?.callId);
      // The synthesized tier, bwrap's PWD (--chdir), and the two platform variables: nothing else.
      expect(printed.env).toEqual(['HOME', 'LANG', 'PATH', 'PWD', 'TZ', 'VEETBOT_BRIDGE_SOCKET', 'VEETBOT_BRIDGE_TOKEN']);
      expect(tokenOnCommandLine).toEqual([]);
    } finally {
      await turn.close();
    }
  });

  it('a forged ordinal is ignored: the first call is ordinal 0 whatever the script sends', async () => {
    const script = [
      "import { connect } from 'node:net';",
      'const socket = connect(process.env.VEETBOT_BRIDGE_SOCKET);',
      "socket.setEncoding('utf8');",
      "let buffer = '';",
      "socket.on('data', (text) => { buffer += text; if (buffer.includes('\\n')) { console.log(buffer.trim()); socket.end(); } });",
      "socket.write(JSON.stringify({ token: process.env.VEETBOT_BRIDGE_TOKEN }) + '\\n' + JSON.stringify({ call: 'demo.echo', arguments: {}, ordinal: 7 }) + '\\n');",
    ].join('\n');
    const { handler, calls } = recordingHandler();
    const turn = await bridge.openTurn(turnOf(script), handler, { hostDir });
    try {
      const result = await runScript(script, turn);
      expect(result.exitCode).toBe(0);
      expect(calls.map((call) => call.ordinal)).toEqual([0]);
      expect(calls[0]?.callId).toBe(bridgeCallId(sha256(script), 0));
      expect(ToolResultItem.parse(JSON.parse(result.stdout.text)).call_id).toBe(bridgeCallId(sha256(script), 0));
    } finally {
      await turn.close();
    }
  });

  it('a wrong token, and the token of an earlier turn, are refused inside the sandbox', async () => {
    const script = [
      "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
      "try { await tools.call('demo.echo', {}); console.log('CALLED'); } catch (error) { console.log(error.code); }",
    ].join('\n');
    const earlier = await bridge.openTurn(turnOf(script, 1), recordingHandler().handler, { hostDir });
    const earlierToken = earlier.token;
    await earlier.close();
    const { handler, calls } = recordingHandler();
    const turn = await bridge.openTurn(turnOf(script, 2), handler, { hostDir });
    try {
      for (const wrong of ['0'.repeat(64), earlierToken]) {
        const result = await runScript(script, {
          ...turn,
          platformEnvironment: { ...turn.platformEnvironment, VEETBOT_BRIDGE_TOKEN: wrong },
        });
        expect(result.stdout.text.trim()).toBe('bridge.token_invalid');
      }
      expect(calls).toEqual([]);
    } finally {
      await turn.close();
    }
  });

  it("only this turn's socket is visible: another turn's, a closed turn's, the bridge folder and TCP are not", async () => {
    const other = await bridge.openTurn(turnOf('other', 1), recordingHandler().handler, { hostDir });
    const closed = await bridge.openTurn(turnOf('closed', 1), recordingHandler().handler, { hostDir });
    await closed.close();
    const script = [
      "import { connect } from 'node:net';",
      "import { existsSync, readdirSync, statSync } from 'node:fs';",
      'const attempt = (target) => new Promise((resolve) => {',
      '  const socket = connect(target);',
      "  socket.on('connect', () => { socket.destroy(); resolve('CONNECTED'); });",
      "  socket.on('error', (error) => resolve(error.code));",
      '});',
      "const own = statSync('/run/veetbot-bridge/bridge.sock');",
      'console.log(JSON.stringify({',
      "  listing: readdirSync('/run/veetbot-bridge'),",
      '  own: { uid: own.uid, mode: (own.mode & 0o777).toString(8), socket: own.isSocket() },',
      `  other: await attempt(${JSON.stringify(other.socketHostPath)}),`,
      `  closed: await attempt(${JSON.stringify(closed.socketHostPath)}),`,
      `  bridgeFolder: existsSync(${JSON.stringify(hostDir)}),`,
      `  tcp: await attempt({ host: '127.0.0.1', port: ${port} }),`,
      '}));',
    ].join('\n');
    const { handler } = recordingHandler();
    const turn = await bridge.openTurn(turnOf(script), handler, { hostDir });
    try {
      const result = await runScript(script, turn);
      expect(result.stderr.text).toBe('');
      const seen = JSON.parse(result.stdout.text) as Record<string, unknown>;
      expect(seen.listing).toEqual(['bridge.sock']);
      // Owned by the sandbox user (uid 1000 inside), mode 0600.
      expect(seen.own).toEqual({ uid: 1000, mode: '600', socket: true });
      expect(seen.other).toBe('ENOENT');
      expect(seen.closed).toBe('ENOENT');
      expect(seen.bridgeFolder).toBe(false);
      expect(seen.tcp).not.toBe('CONNECTED');
      expect(tcpConnections).toBe(0);
    } finally {
      await Promise.all([turn.close(), other.close()]);
    }
  });

  it('platform variables must be VEETBOT_ ones: PATH cannot be overridden', async () => {
    const result = await sandbox.run(
      {
        argv: ['/bin/sh', '-c', 'echo ran'],
        workspaceHostPath: data.workspace,
        limits: LIMITS,
        platformEnvironment: { PATH: '/workspace' },
      },
      new AbortController().signal,
    );
    expect(result.ending).toBe('failed_to_start');
    expect(result.detail).toContain('VEETBOT_');
    expect(result.stdout.text).toBe('');
  });
});
