import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeSystem, type ComposedSystem } from '@veetbot/composition';
import { bridgeCallId, type Principal, type ToolResultItem } from '@veetbot/domain';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_CACHE } from '../src/test-database';

/*
 * § Approvals inside a script (docs/adr/0039), with the real sandbox, node, bridge and pipeline:
 * a program's call to demo.external_write needs a person (its origin is the program: untrusted).
 * Within approval_hold_seconds the program waits and continues; past it the sandbox is torn
 * down, the orchestration suspends on the approval, and once decided the program runs again
 * from the start with every earlier call deduplicated — effects counted in the outbox.
 */

const tenantId = 'orchestration-approvals';
const principal: Principal = { tenant_id: tenantId, principal_id: 'p', scopes: ['sandbox.run', 'workspace.write', 'demo.write'] };
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const text = (item: ToolResultItem) => item.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

interface Scene {
  readonly dataDir: string;
  readonly database: Database;
  readonly system: ComposedSystem;
}

async function compose(approvalHoldSeconds: number): Promise<Scene> {
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-orchestration-approvals-'));
  await chmod(dataDir, 0o711);
  const database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
  const system = await composeSystem({ database, dataDir, mcp: false, runtimeSettings: { approvalHoldSeconds } });
  await system.stores.tenants.create({ id: tenantId, name: tenantId, createdAt: new Date() });
  return { dataDir, database, system };
}

async function dispose(scene: Scene | undefined): Promise<void> {
  if (scene === undefined) return;
  await scene.system.close({ drainMs: 0 });
  await scene.database.close();
  await rm(scene.dataDir, { recursive: true, force: true });
}

function programOf(calls: readonly (readonly [string, Record<string, unknown>])[]): string {
  return [
    "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
    `for (const [name, args] of ${JSON.stringify(calls)}) {`,
    '  const item = await tools.call(name, args);',
    '  console.log(JSON.stringify({ name, status: item.outcome.status, reason: item.outcome.reason_code }));',
    '}',
  ].join('\n');
}

function printed(item: ToolResultItem): { name: string; status: string; reason: string }[] {
  return text(item)
    .split('\n')
    .filter((line) => line.startsWith('{"name"'))
    .map((line) => JSON.parse(line) as { name: string; status: string; reason: string });
}

async function openRun(scene: Scene) {
  const { system } = scene;
  const session = await system.runtime.openSession(
    tenantId,
    principal,
    { agentId: 'a' },
    { flags: {}, targetKinds: [...system.environment.targetKinds] },
  );
  const run = await system.runtime.createRun(tenantId, session.id, { deadlineAt: new Date(Date.now() + 3_600_000) });
  return {
    runId: run.id,
    submit: (source: string) =>
      system.runtime.submitStep({
        tenantId,
        runId: run.id,
        stepNumber: 1,
        principal,
        calls: [
          {
            callId: 'orchestrate',
            toolName: 'sandbox.run_orchestration',
            arguments: { language: 'javascript', source },
            contextTrust: ['user'],
          },
        ],
      }),
    events: () => system.stores.events.listAfter(tenantId, run.id, 0, 1_000),
    rows: () => system.stores.invocations.listForRun(tenantId, run.id),
  };
}

async function outbox(scene: Scene): Promise<string[]> {
  const body = await readFile(join(scene.dataDir, 'outbox.log'), 'utf8').catch(() => '');
  // Each line is `<idempotency key>\t<line>`: the lines sent, in order.
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.slice(line.indexOf('\t') + 1));
}

async function pendingApproval(scene: Scene): Promise<string> {
  for (;;) {
    const [pending] = await scene.system.stores.approvals.listPending(tenantId, 10);
    if (pending !== undefined) return pending.id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function decide(scene: Scene, approvalId: string, decision: 'approved' | 'denied') {
  return scene.system.stores.approvals.decide(tenantId, approvalId, { decision, decidedBy: 'p', decidedAt: new Date() }, []);
}

describe('an approval decided within the hold: the program waits and continues', () => {
  let scene: Scene | undefined;
  beforeAll(async () => {
    // Long enough that the decision always lands inside it.
    scene = await compose(600);
  }, 60_000);
  afterAll(() => dispose(scene));

  it('the call runs once approved, the program reads its outcome, and no suspension happens', async () => {
    const s = scene!;
    const run = await openRun(s);
    const source = programOf([
      ['workspace.write_text', { path: 'before.md', text: 'before' }],
      ['demo.external_write', { line: 'within-the-hold' }],
    ]);
    const submitted = run.submit(source);
    await decide(s, await pendingApproval(s), 'approved');
    const outcome = await submitted;
    expect(outcome.suspended).toEqual([]);
    const item = outcome.items[0]!;
    expect(item.outcome.status).toBe('succeeded');
    expect(printed(item)).toEqual([
      { name: 'workspace.write_text', status: 'succeeded', reason: 'tool.ok' },
      { name: 'demo.external_write', status: 'succeeded', reason: 'tool.ok' },
    ]);
    expect(await outbox(s)).toEqual(['within-the-hold']);
    const types = (await run.events()).map((e) => e.type);
    expect(types.filter((t) => t === 'bridge.session.opened')).toHaveLength(1);
    expect(types).not.toContain('run.suspended');
  }, 120_000);
});

describe('an approval past the hold: the orchestration suspends, then re-runs with earlier calls deduplicated', () => {
  let scene: Scene | undefined;
  beforeAll(async () => {
    scene = await compose(1);
  }, 60_000);
  afterAll(() => dispose(scene));

  it('approved: the script runs again from the start; the earlier calls answer from their rows; the write happens once', async () => {
    const s = scene!;
    const run = await openRun(s);
    const source = programOf([
      ['workspace.write_text', { path: 'first.md', text: 'first' }],
      ['math.evaluate', { expression: '20 + 22' }],
      ['demo.external_write', { line: 'after-the-approval' }],
    ]);
    const scriptHash = sha256(source);
    const [writeId, mathId, sendId] = [0, 1, 2].map((ordinal) => bridgeCallId(scriptHash, ordinal));

    const suspended = await run.submit(source);
    expect(suspended.items).toEqual([]);
    const approvalId = (await s.system.stores.approvals.listPending(tenantId, 10))[0]?.id;
    expect(suspended.suspended).toEqual([{ callId: 'orchestrate', invocationId: expect.any(String), kind: 'approval', ref: approvalId }]);
    const orchestration = (await run.rows()).find((r) => r.callId === 'orchestrate');
    expect(orchestration).toMatchObject({ status: 'running', suspendedKind: 'approval', suspendedRef: approvalId });
    expect((await run.rows()).find((r) => r.callId === sendId)).toMatchObject({ status: 'waiting_for_approval' });
    const closed = (await run.events()).filter((e) => e.type === 'bridge.session.closed');
    expect(closed.map((e) => e.payload.ending)).toEqual(['approval_hold']);
    expect(await outbox(s)).toEqual([]);

    // Asked again before the decision: the recorded state, no new turn.
    const again = await run.submit(source);
    expect(again.suspended).toEqual(suspended.suspended);
    expect((await run.events()).filter((e) => e.type === 'bridge.session.opened')).toHaveLength(1);

    await decide(s, approvalId!, 'approved');
    // What the approvals route does: the step goes back to the queue and is submitted again.
    const resumed = await run.submit(source);
    expect(resumed.suspended).toEqual([]);
    const item = resumed.items[0]!;
    expect(item.outcome.status).toBe('succeeded');
    expect(printed(item)).toEqual([
      { name: 'workspace.write_text', status: 'succeeded', reason: 'tool.ok' },
      { name: 'math.evaluate', status: 'succeeded', reason: 'tool.ok' },
      { name: 'demo.external_write', status: 'succeeded', reason: 'tool.ok' },
    ]);
    expect(await outbox(s)).toEqual(['after-the-approval']);

    // Effects counted: each bridge call started exactly once across both turns.
    const events = await run.events();
    const startedFor = (callId: string | undefined) =>
      events.filter((e) => e.type === 'tool.call.started' && e.payload.call_id === callId).length;
    expect([startedFor(writeId), startedFor(mathId), startedFor(sendId)]).toEqual([1, 1, 1]);
    expect(events.filter((e) => e.type === 'bridge.session.opened')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'run.resumed').map((e) => e.payload.suspended_ref)).toEqual([approvalId]);
    // The resumption is not a crash: the same attempt.
    expect((await run.rows()).find((r) => r.callId === 'orchestrate')).toMatchObject({
      status: 'succeeded',
      suspendedKind: null,
      attemptNumber: 1,
    });
  }, 120_000);

  it('denied: the re-run program reads the denial, and nothing is sent', async () => {
    const s = scene!;
    const before = await outbox(s);
    const run = await openRun(s);
    const source = programOf([['demo.external_write', { line: 'never-sent' }]]);
    const suspended = await run.submit(source);
    expect(suspended.suspended).toHaveLength(1);
    await decide(s, suspended.suspended[0]!.ref, 'denied');
    const resumed = await run.submit(source);
    const item = resumed.items[0]!;
    expect(item.outcome.status).toBe('succeeded');
    expect(printed(item)).toEqual([{ name: 'demo.external_write', status: 'denied', reason: 'policy.matrix.external_write' }]);
    expect(await outbox(s)).toEqual(before);
  }, 120_000);
});
