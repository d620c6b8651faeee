import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bridgeCallId, ToolResultItem } from '@veetbot/domain';
import type { BridgeTurn } from '@veetbot/ports';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_MAX_CONNECTIONS } from '../src/bridge/bridge-server';
import { BRIDGE_MAX_FRAME_BYTES, BridgeServer } from '../src/index';
import { exchange, line, recordingHandler, sha256 } from './bridge-fixture';

// docs/adr/0038: the bridge's transport over real unix sockets, from the host side (the sandboxed
// client is in bridge-sandbox.test.ts). Each refusal would pass through without its check.
const root = mkdtempSync(path.join(tmpdir(), 'veetbot-bridge-'));
// A root worker's data folder is traversable by the sandbox host user (docs/adr/0037).
chmodSync(root, 0o711);
const hostDir = path.join(root, 'bridge');
const server = new BridgeServer();
const SCRIPT = 'await tools.call("demo.echo", { x: 1 })';
const TURN: BridgeTurn = { tenantId: 'tenant-a', runId: 'run-1', stepNumber: 3, scriptHash: sha256(SCRIPT) };
const isRoot = process.getuid?.() === 0;

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the socket', () => {
  it('is a fresh 0600 socket in a 0700 folder, owned by the sandbox host user, never a TCP port', async () => {
    const turn = await server.openTurn(TURN, recordingHandler().handler, { hostDir });
    try {
      const socket = statSync(turn.socketHostPath);
      const folder = statSync(path.dirname(turn.socketHostPath));
      expect(socket.isSocket()).toBe(true);
      expect(socket.mode & 0o777).toBe(0o600);
      expect(folder.mode & 0o777).toBe(0o700);
      const owner = isRoot ? 65534 : process.getuid?.();
      expect(socket.uid).toBe(owner);
      expect(folder.uid).toBe(owner);
      expect(path.dirname(path.dirname(turn.socketHostPath))).toBe(hostDir);
      expect(turn.token).toMatch(/^[0-9a-f]{64}$/);
      expect(turn.platformEnvironment).toEqual({ VEETBOT_BRIDGE_SOCKET: turn.socketSandboxPath, VEETBOT_BRIDGE_TOKEN: turn.token });
      expect(turn.readOnlyBinds.map((bind) => bind.hostPath)).toContain(path.dirname(turn.socketHostPath));
    } finally {
      await turn.close();
    }
  });

  it('a second turn gets another folder and another token', async () => {
    const a = await server.openTurn(TURN, recordingHandler().handler, { hostDir });
    const b = await server.openTurn(TURN, recordingHandler().handler, { hostDir });
    expect(path.dirname(a.socketHostPath)).not.toBe(path.dirname(b.socketHostPath));
    expect(a.token).not.toBe(b.token);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('the token', () => {
  it('a wrong token is refused with bridge.token_invalid and the connection ends; the handler never runs', async () => {
    const { handler, calls } = recordingHandler();
    const turn = await server.openTurn(TURN, handler, { hostDir });
    const wrong = `${turn.token.slice(0, 63)}${turn.token.endsWith('0') ? '1' : '0'}`;
    const result = await exchange(turn.socketHostPath, line({ token: wrong }) + line({ call: 'demo.echo', arguments: {} }), 99);
    expect(result.closed).toBe(true);
    expect(result.frames).toEqual([{ error: { code: 'bridge.token_invalid', message: expect.any(String) } }]);
    const missing = await exchange(turn.socketHostPath, line({ call: 'demo.echo', arguments: {} }), 99);
    expect(missing.frames[0]).toMatchObject({ error: { code: 'bridge.token_invalid' } });
    expect(calls).toEqual([]);
    await turn.close();
  });

  it("a token of an earlier turn is refused by a later turn's socket", async () => {
    const earlier = await server.openTurn(TURN, recordingHandler().handler, { hostDir });
    const oldToken = earlier.token;
    await earlier.close();
    const { handler, calls } = recordingHandler();
    const later = await server.openTurn({ ...TURN, stepNumber: 4 }, handler, { hostDir });
    const result = await exchange(later.socketHostPath, line({ token: oldToken }) + line({ call: 'demo.echo' }), 99);
    expect(result.frames).toEqual([{ error: { code: 'bridge.token_invalid', message: expect.any(String) } }]);
    expect(result.closed).toBe(true);
    expect(calls).toEqual([]);
    await later.close();
  });

  it('the socket path of a closed turn no longer exists: connecting fails', async () => {
    const turn = await server.openTurn(TURN, recordingHandler().handler, { hostDir });
    const before = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.echo' }), 1);
    expect(before.frames).toHaveLength(1);
    await turn.close();
    expect(existsSync(path.dirname(turn.socketHostPath))).toBe(false);
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const socket = connect(turn.socketHostPath);
      socket.on('connect', () => resolve(Object.assign(new Error('connected'), { code: 'CONNECTED' })));
      socket.on('error', resolve);
    });
    expect(error.code).toBe('ENOENT');
  });
});

describe('ordinals and call ids', () => {
  it('ignores the script ordinal: counted 0, 1, 2 across connections in arrival order', async () => {
    const { handler, calls } = recordingHandler();
    const turn = await server.openTurn(TURN, handler, { hostDir });
    const first = await exchange(
      turn.socketHostPath,
      line({ token: turn.token }) + line({ call: 'demo.echo', arguments: { x: 1 }, ordinal: 7 }) + line({ call: 'demo.echo', ordinal: 0 }),
      2,
    );
    const second = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.other', arguments: [1] }), 1);
    expect(calls.map((call) => call.ordinal)).toEqual([0, 1, 2]);
    expect(calls.map((call) => call.callId)).toEqual([0, 1, 2].map((n) => bridgeCallId(TURN.scriptHash, n)));
    expect(calls[0]?.arguments).toEqual({ x: 1 });
    expect(calls[1]?.arguments).toEqual({});
    expect(calls[2]).toMatchObject({ toolName: 'demo.other', arguments: [1] });
    // The answers are the ToolResultItem the model reads, strictly, in request order.
    for (const frame of [...first.frames, ...second.frames]) expect(ToolResultItem.parse(frame)).toEqual(frame);
    expect(first.frames.map((frame) => frame.call_id)).toEqual([calls[0]?.callId, calls[1]?.callId]);
    expect(turn.callsCounted()).toBe(3);
    await turn.close();
  });

  it('refuses the call past the cap with bridge.calls_exhausted (maximumCalls 3)', async () => {
    const { handler, calls } = recordingHandler();
    const turn = await server.openTurn(TURN, handler, { hostDir, maximumCalls: 3 });
    const requests = Array.from({ length: 5 }, (_, n) => line({ call: 'demo.echo', arguments: { n } })).join('');
    const result = await exchange(turn.socketHostPath, line({ token: turn.token }) + requests, 5);
    expect(calls).toHaveLength(3);
    const statuses = result.frames.map((frame) => (frame as { outcome: { reason_code: string } }).outcome.reason_code);
    expect(statuses).toEqual(['tool.ok', 'tool.ok', 'tool.ok', 'bridge.calls_exhausted', 'bridge.calls_exhausted']);
    const refused = ToolResultItem.parse(result.frames[3]);
    expect(refused.outcome).toMatchObject({ status: 'failed', action: 'demo.echo', retryable: false });
    expect(refused.call_id).toBe(bridgeCallId(TURN.scriptHash, 3));
    await turn.close();
  });

  it('the default cap is 64: the 65th call is refused', async () => {
    const { handler, calls } = recordingHandler();
    const turn = await server.openTurn(TURN, handler, { hostDir });
    const requests = Array.from({ length: 65 }, () => line({ call: 'demo.echo' })).join('');
    const result = await exchange(turn.socketHostPath, line({ token: turn.token }) + requests, 65);
    expect(calls).toHaveLength(64);
    expect((result.frames[63] as { outcome: { reason_code: string } }).outcome.reason_code).toBe('tool.ok');
    expect((result.frames[64] as { outcome: { reason_code: string } }).outcome.reason_code).toBe('bridge.calls_exhausted');
    await turn.close();
  });
});

describe('bad frames and bad handlers never crash the worker', () => {
  it('a malformed frame is refused with bridge.frame_malformed; the next connection is answered', async () => {
    const { handler, calls } = recordingHandler();
    const turn = await server.openTurn(TURN, handler, { hostDir });
    const bad = await exchange(turn.socketHostPath, `${line({ token: turn.token })}{"call": "demo.echo",\n`, 99);
    expect(bad.frames).toEqual([{ error: { code: 'bridge.frame_malformed', message: expect.any(String) } }]);
    expect(bad.closed).toBe(true);
    const notObject = await exchange(turn.socketHostPath, `${line({ token: turn.token })}[1,2]\n`, 99);
    expect(notObject.frames[0]).toMatchObject({ error: { code: 'bridge.frame_malformed' } });
    const noName = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 42 }), 99);
    expect(noName.frames[0]).toMatchObject({ error: { code: 'bridge.request_invalid' } });
    const good = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.echo' }), 1);
    expect(ToolResultItem.parse(good.frames[0]).outcome.status).toBe('succeeded');
    expect(calls).toHaveLength(1);
    await turn.close();
  });

  it('an oversized frame is refused with bridge.frame_too_large; the next connection is answered', async () => {
    const { handler, calls } = recordingHandler();
    const turn = await server.openTurn(TURN, handler, { hostDir });
    const huge = line({ call: 'demo.echo', arguments: { blob: 'x'.repeat(BRIDGE_MAX_FRAME_BYTES) } });
    const bad = await exchange(turn.socketHostPath, line({ token: turn.token }) + huge, 99);
    expect(bad.frames).toEqual([{ error: { code: 'bridge.frame_too_large', message: expect.any(String) } }]);
    expect(bad.closed).toBe(true);
    const good = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.echo' }), 1);
    expect(ToolResultItem.parse(good.frames[0]).outcome.status).toBe('succeeded');
    expect(calls.map((call) => call.ordinal)).toEqual([0]);
    await turn.close();
  });

  it('a handler that throws, or answers outside the allowlist, is answered tool.internal', async () => {
    let mode: 'throw' | 'extra' | 'wrong_id' = 'throw';
    const { handler: echo } = recordingHandler();
    const turn = await server.openTurn(
      TURN,
      async (call, signal) => {
        if (mode === 'throw') throw new Error('secret detail /etc/veetbot');
        const item = await echo(call, signal);
        return (mode === 'extra' ? { ...item, secret: 'leak' } : { ...item, call_id: 'bridge:other' }) as typeof item;
      },
      { hostDir },
    );
    for (const next of ['throw', 'extra', 'wrong_id'] as const) {
      mode = next;
      const result = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.echo' }), 1);
      const item = ToolResultItem.parse(result.frames[0]);
      expect(item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.internal.bridge_handler' });
      expect(JSON.stringify(result.frames[0])).not.toMatch(/secret|leak/);
    }
    await turn.close();
  });

  it('a program cannot hold more than BRIDGE_MAX_CONNECTIONS connections at once; closing one frees a place', async () => {
    const turn = await server.openTurn(TURN, recordingHandler().handler, { hostDir });
    const held = await Promise.all(
      Array.from(
        { length: BRIDGE_MAX_CONNECTIONS },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect(turn.socketHostPath, () => resolve(socket));
            socket.on('error', reject);
          }),
      ),
    );
    const extra = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.echo' }), 99);
    expect(extra.frames).toEqual([{ error: { code: 'bridge.connections_exhausted', message: expect.any(String) } }]);
    expect(extra.closed).toBe(true);
    const first = held.shift();
    await new Promise<void>((resolve) => {
      first?.on('close', () => resolve());
      first?.destroy();
    });
    // The server notices the peer's close on its next read.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.echo' }), 1);
    expect(ToolResultItem.parse(again.frames[0]).outcome.status).toBe('succeeded');
    for (const socket of held) socket.destroy();
    const closing = performance.now();
    await turn.close();
    // close() destroys every connection, refused ones too: it does not wait out their grace.
    expect(performance.now() - closing).toBeLessThan(500);
  });

  it('close() aborts a pending handler and ends its connection', async () => {
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const turn = await server.openTurn(
      TURN,
      (_call, signal) =>
        new Promise((_resolve, reject) => {
          started();
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
      { hostDir },
    );
    const pending = exchange(turn.socketHostPath, line({ token: turn.token }) + line({ call: 'demo.slow' }), 1);
    await running;
    await turn.close();
    const result = await pending;
    expect(aborted).toBe(true);
    expect(result.closed).toBe(true);
    expect(result.frames).toEqual([]);
  });
});
