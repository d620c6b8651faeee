import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ReconcileQuery, WorkspaceFiles } from '@veetbot/ports';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDemoExternalWriteTool } from '../src/demo/demo-external-write';
import { createBuiltinReconcilers } from '../src/reconcile/builtin-reconcilers';
import {
  createDemoOutboxReconciler,
  fileOutboxReader,
  type OutboxReader,
  type OutboxSnapshot,
} from '../src/reconcile/demo-outbox-reconciler';
import { createWorkspaceWriteReconciler } from '../src/reconcile/workspace-write-reconciler';
import { createWorkspaceWriteTextTool } from '../src/workspace/workspace-write-text';
import { createFakeContext } from './fake-context';
import { createTempWorkspace, type TempWorkspace } from './temp-workspace';

let ws: TempWorkspace;
let counter = 0;
beforeEach(() => {
  ws = createTempWorkspace();
});
afterEach(() => ws.cleanup());

const keyOf = (seed: string) => createHash('sha256').update(seed).digest('hex');

function query(key: string, args: Record<string, unknown>, files: WorkspaceFiles | null = null): ReconcileQuery {
  return {
    tenantId: 'tenant_test',
    runId: 'run',
    invocationId: 'invocation',
    toolName: 'demo.external_write',
    toolVersion: '1.0.0',
    idempotencyKey: key,
    arguments: args,
    watermarkAt: new Date(0),
    workspace: async () => files,
    signal: new AbortController().signal,
  };
}

class Crash extends Error {}

type Scenario = 'completed' | 'crash_before_effect' | 'crash_after_effect';

/** Runs the real tool against a real outbox; a crash hook stands for the worker dying at that point. */
async function send(outbox: string, line: string, key: string, scenario: Scenario = 'completed'): Promise<void> {
  const die = async () => {
    throw new Crash('worker died');
  };
  const tool = createDemoExternalWriteTool({
    outboxPath: outbox,
    ...(scenario === 'crash_before_effect' ? { beforeEffect: die } : {}),
    ...(scenario === 'crash_after_effect' ? { afterEffect: die } : {}),
  });
  await tool.execute({ line }, createFakeContext({ idempotencyKey: key, workspaceRoot: null }).context).catch((error) => {
    if (!(error instanceof Crash)) throw error;
  });
}

/** One read's fault (docs/adr/0063, the lookup that lies or fails). */
type Lie =
  | { kind: 'honest' }
  | { kind: 'throws' }
  | { kind: 'missing' }
  /** A short read: the tail is dropped, fstat tells the truth. */
  | { kind: 'short'; drop: number }
  /**
   * The first read only: the tail is missing and fstat agrees — the outbox grew between the two
   * reads (a concurrent append), which is not a fault. A source whose content and metadata are
   * both stale on every read is out of the model (docs/adr/0063).
   */
  | { kind: 'stale'; drop: number }
  /** One byte changed, sizes unchanged. */
  | { kind: 'corrupt'; at: number; xor: number }
  /** The file appears to shrink during the read. */
  | { kind: 'shrinking' };

function lying(reader: OutboxReader, lies: readonly [Lie, Lie]): OutboxReader {
  let reads = 0;
  let corrupted: { at: number; xor: number } | null = null;
  return async () => {
    const lie = lies[Math.min(reads++, 1)]!;
    if (lie.kind === 'throws') throw new Error('EIO');
    if (lie.kind === 'missing') return null;
    const real = await reader();
    if (real === null) return null;
    const bytes = Buffer.from(real.bytes);
    const at = (n: number) => (bytes.length === 0 ? 0 : n % bytes.length);
    switch (lie.kind) {
      case 'honest':
        return real;
      case 'short':
        return { ...real, bytes: bytes.subarray(0, Math.max(0, bytes.length - 1 - at(lie.drop))) };
      case 'stale': {
        const kept = bytes.subarray(0, Math.max(0, bytes.length - 1 - at(lie.drop)));
        return { bytes: kept, sizeBefore: kept.length, sizeAfter: kept.length } satisfies OutboxSnapshot;
      }
      case 'corrupt': {
        // Independent faults: the second read never repeats the first one's exact corruption.
        const xor = corrupted !== null && corrupted.at === at(lie.at) && corrupted.xor === lie.xor ? (lie.xor % 255) + 1 : lie.xor;
        corrupted = { at: at(lie.at), xor };
        if (bytes.length > 0) bytes[at(lie.at)] = bytes[at(lie.at)]! ^ xor;
        return { ...real, bytes };
      }
      case 'shrinking':
        return { ...real, sizeAfter: real.sizeBefore - 1 };
    }
  };
}

const faults: fc.Arbitrary<Lie>[] = [
  fc.constant<Lie>({ kind: 'honest' }),
  fc.constant<Lie>({ kind: 'throws' }),
  fc.constant<Lie>({ kind: 'missing' }),
  fc.nat().map((drop): Lie => ({ kind: 'short', drop })),
  fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }).map((c): Lie => ({ kind: 'corrupt', ...c })),
  fc.constant<Lie>({ kind: 'shrinking' }),
];
/**
 * Faults are per read and independent (the same corruption in both reads is a coherent liar,
 * which no reading can catch: docs/adr/0063; `lying` never repeats one).
 */
const liesArbitrary: fc.Arbitrary<[Lie, Lie]> = fc.tuple(
  fc.oneof(
    ...faults,
    fc.nat().map((drop): Lie => ({ kind: 'stale', drop })),
  ),
  fc.oneof(...faults),
);

const lineArbitrary = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/[\r\n]/.test(s));

describe('demo.external_write reconciler (docs/adr/0063)', () => {
  it('answers applied for a call whose record is in the outbox, and not_applied for one that died before its effect', async () => {
    const outbox = path.join(ws.base, 'external', 'outbox.log');
    const reconciler = createDemoOutboxReconciler({ outboxPath: outbox });
    await send(outbox, 'earlier', keyOf('earlier'));
    await send(outbox, 'hello', keyOf('sent'), 'crash_after_effect');
    await send(outbox, 'never', keyOf('unsent'), 'crash_before_effect');

    const applied = await reconciler.reconcile(query(keyOf('sent'), { line: 'hello' }));
    expect(applied).toEqual({ outcome: 'applied', evidence: expect.stringContaining(`key ${keyOf('sent').slice(0, 12)}`) });
    const notApplied = await reconciler.reconcile(query(keyOf('unsent'), { line: 'never' }));
    expect(notApplied.outcome).toBe('not_applied');
    expect(notApplied.evidence).toContain('2 records');
  });

  it('answers unknown when the record under the key is not the call’s line, when the outbox is missing, or holds a malformed record', async () => {
    const outbox = path.join(ws.base, 'external', 'outbox.log');
    const reconciler = createDemoOutboxReconciler({ outboxPath: outbox });
    expect((await reconciler.reconcile(query(keyOf('a'), { line: 'x' }))).outcome).toBe('unknown');
    await send(outbox, 'what was sent', keyOf('a'));
    expect((await reconciler.reconcile(query(keyOf('a'), { line: 'something else' }))).outcome).toBe('unknown');
    writeFileSync(outbox, `${keyOf('a')}\twhat was sent\nnot a record\n`);
    expect((await reconciler.reconcile(query(keyOf('b'), { line: 'x' }))).outcome).toBe('unknown');
  });

  it('property: an effect that happened is never settled not_applied, one that did not never applied; a lying or failing read gives unknown or an error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArbitrary, { maxLength: 4 }),
        lineArbitrary,
        fc.constantFrom<Scenario>('completed', 'crash_before_effect', 'crash_after_effect'),
        fc.array(lineArbitrary, { maxLength: 3 }),
        liesArbitrary,
        async (before, line, scenario, after, lies) => {
          const outbox = path.join(ws.base, 'external', `outbox-${counter++}.log`);
          const key = keyOf(`call-${counter}`);
          for (const [i, other] of before.entries()) await send(outbox, other, keyOf(`before-${counter}-${i}`));
          await send(outbox, line, key, scenario);
          for (const [i, other] of after.entries()) await send(outbox, other, keyOf(`after-${counter}-${i}`));
          const truth = scenario === 'crash_before_effect' ? 'not_applied' : 'applied';

          const reconciler = createDemoOutboxReconciler({ reader: lying(fileOutboxReader(outbox), lies) });
          const answer = await reconciler.reconcile(query(key, { line })).then(
            (a) => a.outcome,
            () => 'error' as const,
          );
          // The promise: never a definite wrong answer, whatever the reads did.
          expect([truth, 'unknown', 'error']).toContain(answer);
          // And with honest reads (the outbox exists whenever anything was appended), the truth.
          const exists = before.length + after.length > 0 || truth === 'applied';
          if (lies[0].kind === 'honest' && lies[1].kind === 'honest' && exists) expect(answer).toBe(truth);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('workspace.write_text reconciler (docs/adr/0063)', () => {
  it('answers applied when the file holds the written text (by sha256, through WorkspaceFiles), unknown otherwise', async () => {
    const tool = createWorkspaceWriteTextTool();
    const fake = createFakeContext({ workspaceRoot: ws.root });
    const written = await tool.execute({ path: 'notes/a.txt', text: 'hello reconciler' }, fake.context);
    expect(written.ok).toBe(true);
    const files = fake.context.workspace!.files;
    const reconciler = createWorkspaceWriteReconciler();

    expect(await reconciler.reconcile(query('k'.repeat(64), { path: 'notes/a.txt', text: 'hello reconciler' }, files))).toMatchObject({
      outcome: 'applied',
    });
    // Another text there may be a later write over ours: not proof either way.
    expect((await reconciler.reconcile(query('k'.repeat(64), { path: 'notes/a.txt', text: 'hello' }, files))).outcome).toBe('unknown');
    expect((await reconciler.reconcile(query('k'.repeat(64), { path: 'notes/b.txt', text: 'x' }, files))).outcome).toBe('unknown');
    expect((await reconciler.reconcile(query('k'.repeat(64), { path: '../escape', text: 'x' }, files))).outcome).toBe('unknown');
    expect((await reconciler.reconcile(query('k'.repeat(64), { path: 'notes/a.txt', text: 'hello reconciler' }, null))).outcome).toBe(
      'unknown',
    );
  });
});

describe('createBuiltinReconcilers', () => {
  it('has a reconciler for each builtin that writes; sandbox tools always answer unknown; other tools (MCP) have none', async () => {
    const reconcilers = createBuiltinReconcilers({ outboxPath: path.join(ws.base, 'outbox.log') });
    expect([...reconcilers.toolNames()].sort()).toEqual([
      'demo.external_write',
      'sandbox.run_command',
      'sandbox.run_orchestration',
      'workspace.write_text',
    ]);
    expect(reconcilers.forTool('acme.ping', 'sha256:x')).toBeNull();
    expect(reconcilers.forTool('workspace.read_text', '1.0.0')).toBeNull();
    const sandbox = reconcilers.forTool('sandbox.run_command', '1.0.0')!;
    expect((await sandbox.reconcile(query('k'.repeat(64), { command: ['true'] }))).outcome).toBe('unknown');
  });
});
