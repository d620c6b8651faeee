import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { BridgeCallHandler } from '@veetbot/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeServer, BubblewrapOrchestration, BubblewrapSandbox } from '../src/index';
import { recordingHandler, sha256 } from './bridge-fixture';
import { LIMITS, makeDataDir } from './sandbox-fixture';

// docs/adr/0039: one orchestration turn over the real bridge and the real sandbox — the source
// on node's stdin (nothing written to the workspace), the script hash as the program's argument,
// the turn closed whatever happens.
const data = makeDataDir();
const sandbox = new BubblewrapSandbox({ stateDir: data.stateDir, workspaceRoot: data.workspaceRoot });
const bridgeHostDir = path.join(data.root, 'bridge');
const orchestration = new BubblewrapOrchestration({ sandbox, bridge: new BridgeServer(), bridgeHostDir });
const NODE_LIMITS = { ...LIMITS, memoryBytes: 8 * 1024 * 1024 * 1024 };

beforeAll(async () => {
  expect(await orchestration.availability()).toEqual({ available: true });
});

afterAll(() => data.cleanup());

function turn(source: string, handler: BridgeCallHandler, maximumCalls = 64, signal = new AbortController().signal) {
  const scriptHash = sha256(source);
  return orchestration.runTurn(
    {
      turn: { tenantId: 't', runId: 'run-a', stepNumber: 1, scriptHash },
      language: 'javascript',
      source,
      workspaceHostPath: data.workspace,
      limits: NODE_LIMITS,
      maximumCalls,
    },
    handler,
    signal,
  );
}

describe('BubblewrapOrchestration', () => {
  it('runs the source as an ES module from stdin with its script hash as argv[2]; calls reach the handler; the turn is closed after', async () => {
    const source = [
      "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
      "const item = await tools.call('math.evaluate', { expression: '1 + 1' });",
      'console.log(process.argv[2], item.call_id);',
      "console.log(JSON.stringify(require === undefined ? 'esm' : 'cjs'));",
    ].join('\n');
    const { handler, calls } = recordingHandler();
    const result = await turn(source, handler);
    // `require` is not defined in an ES module: the line throws, after the first printed.
    expect(result.sandbox.ending).toBe('exited');
    expect(result.sandbox.stdout.text).toContain(`${sha256(source)} ${calls[0]?.callId}`);
    expect(result.sandbox.stderr.text).toContain('require is not defined');
    expect(result.callsCounted).toBe(1);
    expect(calls.map((c) => c.toolName)).toEqual(['math.evaluate']);
    // Nothing of the program in the workspace; no turn folder left.
    expect(readdirSync(data.workspace)).toEqual([]);
    expect(readdirSync(bridgeHostDir)).toEqual([]);
  }, 60_000);

  it('an aborted turn kills the program and still closes the turn', async () => {
    const controller = new AbortController();
    const { handler } = recordingHandler();
    const running = turn('await new Promise((r) => setTimeout(r, 60_000));', handler, 64, controller.signal);
    setTimeout(() => controller.abort(), 500);
    const result = await running;
    expect(result.sandbox.ending).toBe('cancelled');
    expect(readdirSync(bridgeHostDir)).toEqual([]);
  }, 60_000);
});
