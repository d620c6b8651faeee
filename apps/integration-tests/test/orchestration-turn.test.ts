import { createHash } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeSystem, type ComposedSystem } from '@veetbot/composition';
import { bridgeCallId, type Principal, type ToolResultItem } from '@veetbot/domain';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_CACHE } from '../src/test-database';

/*
 * § The programmatic orchestration bridge, wired (docs/adr/0039): sandbox.run_orchestration
 * composed as every process composes it — the real bubblewrap sandbox, real node inside, the
 * real bridge, the one pipeline over a real (PGlite) database. Every bridge call is a governed
 * call with its own row, under the bridge's call id.
 */

let dataDir: string;
let database: Database;
let system: ComposedSystem;
const tenantId = 'orchestration-tenant';
const principal: Principal = { tenant_id: tenantId, principal_id: 'p', scopes: ['sandbox.run', 'workspace.read', 'workspace.write'] };
const MAXIMUM_CALLS = 4;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const text = (item: ToolResultItem) => item.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-orchestration-it-'));
  await chmod(dataDir, 0o711);
  database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
  system = await composeSystem({ database, dataDir, mcp: false, runtimeSettings: { bridgeMaximumCalls: MAXIMUM_CALLS } });
  await system.stores.tenants.create({ id: tenantId, name: tenantId, createdAt: new Date() });
}, 60_000);

afterAll(async () => {
  await system?.close({ drainMs: 0 });
  await database?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function openRun(options: { enabledTools?: string[]; maximumToolCalls?: number } = {}) {
  const session = await system.runtime.openSession(
    tenantId,
    principal,
    { agentId: 'a', ...(options.enabledTools === undefined ? {} : { enabledTools: options.enabledTools }) },
    { flags: {}, targetKinds: [...system.environment.targetKinds] },
  );
  const run = await system.runtime.createRun(tenantId, session.id, {
    deadlineAt: new Date(Date.now() + 3_600_000),
    ...(options.maximumToolCalls === undefined ? {} : { budgets: { maximumToolCalls: options.maximumToolCalls } }),
  });
  let stepNumber = 0;
  const submit = (step: number, toolName: string, args: Record<string, unknown>) =>
    system.runtime.submitStep({
      tenantId,
      runId: run.id,
      stepNumber: step,
      principal,
      calls: [{ callId: `c${step}`, toolName, arguments: args, contextTrust: ['user'] }],
    });
  return {
    session,
    runId: run.id,
    submit,
    async call(toolName: string, args: Record<string, unknown>): Promise<ToolResultItem> {
      stepNumber += 1;
      const outcome = await submit(stepNumber, toolName, args);
      expect(outcome.items).toHaveLength(1);
      return outcome.items[0] as ToolResultItem;
    },
    async orchestrate(source: string): Promise<ToolResultItem> {
      return this.call('sandbox.run_orchestration', { language: 'javascript', source });
    },
  };
}

/** A program that makes `calls` in order and prints each outcome as one JSON line. */
function programOf(calls: readonly (readonly [string, Record<string, unknown>])[]): string {
  return [
    "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
    `for (const [name, args] of ${JSON.stringify(calls)}) {`,
    '  const item = await tools.call(name, args);',
    '  console.log(JSON.stringify({ name, status: item.outcome.status, reason: item.outcome.reason_code, call_id: item.call_id, text: item.content.map((p) => p.text ?? "").join("") }));',
    '}',
  ].join('\n');
}

/** The JSON lines the program printed (its stdout, inside the result text). */
function printed(item: ToolResultItem): { name: string; status: string; reason: string; call_id: string; text: string }[] {
  return text(item)
    .split('\n')
    .filter((line) => line.startsWith('{"name"'))
    .map((line) => JSON.parse(line) as { name: string; status: string; reason: string; call_id: string; text: string });
}

async function rowsOf(runId: string) {
  return system.stores.invocations.listForRun(tenantId, runId);
}

async function eventsOf(runId: string) {
  return system.stores.events.listAfter(tenantId, runId, 0, 1_000);
}

describe('sandbox.run_orchestration, composed', () => {
  it('is registered and pinned only because this host can run a sandbox', async () => {
    expect(system.sandbox).toEqual({ available: true });
    const run = await openRun();
    expect(run.session.toolNames).toContain('sandbox.run_orchestration');
  });

  it('a program calling three tools: three rows under the bridge call ids, each outcome returned to the program', async () => {
    const run = await openRun();
    const source = programOf([
      ['math.evaluate', { expression: '6 * 7' }],
      ['workspace.write_text', { path: 'notes.md', text: 'from the program' }],
      ['workspace.read_text', { path: 'notes.md' }],
    ]);
    const item = await run.orchestrate(source);
    expect(item.outcome.status).toBe('succeeded');
    expect(item.trust).toBe('external_untrusted');
    const scriptHash = sha256(source);
    const ids = [0, 1, 2].map((ordinal) => bridgeCallId(scriptHash, ordinal));

    // The program read each call's outcome: the same item the model would (its call id, its text).
    const lines = printed(item);
    expect(lines.map((l) => [l.name, l.status, l.call_id])).toEqual([
      ['math.evaluate', 'succeeded', ids[0]],
      ['workspace.write_text', 'succeeded', ids[1]],
      ['workspace.read_text', 'succeeded', ids[2]],
    ]);
    expect(lines[0]?.text).toContain('42');
    expect(lines[2]?.text).toContain('from the program');
    // The summary the model reads (structured output of an untrusted tool is not shown to it).
    expect(text(item)).toContain('Exit code 0.');
    expect(text(item)).toContain(
      [
        '--- tool calls (3) ---',
        '0 math.evaluate succeeded tool.ok',
        '1 workspace.write_text succeeded tool.ok',
        '2 workspace.read_text succeeded tool.ok',
      ].join('\n'),
    );

    // One row for the orchestration, one per bridge call: same run, same step, the bridge's ids.
    const rows = await rowsOf(run.runId);
    expect(rows.map((r) => [r.callId, r.toolName, r.status, r.stepNumber])).toEqual([
      ['c1', 'sandbox.run_orchestration', 'succeeded', 1],
      [ids[0], 'math.evaluate', 'succeeded', 1],
      [ids[1], 'workspace.write_text', 'succeeded', 1],
      [ids[2], 'workspace.read_text', 'succeeded', 1],
    ]);
    // The program's requests are model output: EXTERNAL_UNTRUSTED origin, whatever the step saw.
    expect(rows.slice(1).every((r) => r.originTrust === 'external_untrusted')).toBe(true);

    // The turn's events: identity only — never the source, an argument or an output.
    const events = await eventsOf(run.runId);
    const bridge = events.filter((e) => e.type.startsWith('bridge.session.'));
    expect(bridge.map((e) => e.type)).toEqual(['bridge.session.opened', 'bridge.session.closed']);
    const orchestrationRow = rows[0]!;
    expect(bridge[0]?.payload).toEqual({
      invocation_id: orchestrationRow.id,
      run_id: run.runId,
      step_number: 1,
      call_id: 'c1',
      attempt_number: 1,
      turn_id: expect.any(String),
      script_hash: scriptHash,
      maximum_calls: MAXIMUM_CALLS,
    });
    expect(bridge[1]?.payload).toMatchObject({
      turn_id: bridge[0]?.payload.turn_id,
      ending: 'exited',
      calls_counted: 3,
      calls_answered: 3,
    });
    const serialized = JSON.stringify(bridge.map((e) => e.payload));
    for (const secret of ['6 * 7', 'from the program', 'notes.md', 'tools.call']) expect(serialized).not.toContain(secret);
  }, 60_000);

  it('a resubmitted step re-executes nothing: the orchestration and every call answer from their rows', async () => {
    const run = await openRun();
    const source = programOf([
      ['workspace.write_text', { path: 'once.md', text: 'one' }],
      ['math.evaluate', { expression: '1 + 1' }],
    ]);
    const first = await run.submit(1, 'sandbox.run_orchestration', { language: 'javascript', source });
    expect(first.items[0]?.outcome.status).toBe('succeeded');
    const started = async () => (await eventsOf(run.runId)).filter((e) => e.type === 'tool.call.started').length;
    const opened = async () => (await eventsOf(run.runId)).filter((e) => e.type === 'bridge.session.opened').length;
    // The orchestration and its two calls each started once.
    expect(await started()).toBe(3);
    const rowsBefore = await rowsOf(run.runId);
    const again = await run.submit(1, 'sandbox.run_orchestration', { language: 'javascript', source });
    expect(again.items).toEqual(first.items);
    expect(await started()).toBe(3);
    expect(await opened()).toBe(1);
    expect(await rowsOf(run.runId)).toEqual(rowsBefore);
  }, 60_000);

  it('a tool the session did not pin is refused by the pipeline, with its row; a control tool is refused by the bridge', async () => {
    const run = await openRun({ enabledTools: ['sandbox.run_orchestration', 'math.evaluate'] });
    const source = programOf([
      ['workspace.write_text', { path: 'x.md', text: 'x' }],
      ['conversation.ask_user', { question: 'may I?' }],
      ['math.evaluate', { expression: '2 + 3' }],
    ]);
    const item = await run.orchestrate(source);
    expect(item.outcome.status).toBe('succeeded');
    const lines = printed(item);
    expect(lines.map((l) => [l.name, l.status, l.reason])).toEqual([
      ['workspace.write_text', 'denied', 'policy.tool.not_enabled'],
      ['conversation.ask_user', 'failed', 'bridge.tool_not_callable'],
      ['math.evaluate', 'succeeded', 'tool.ok'],
    ]);
    const rows = await rowsOf(run.runId);
    const scriptHash = sha256(source);
    // The unpinned call has its row (the pipeline recorded the refusal); the bridge's own refusal has none.
    expect(rows.map((r) => [r.callId, r.toolName, r.status])).toEqual([
      ['c1', 'sandbox.run_orchestration', 'succeeded'],
      [bridgeCallId(scriptHash, 0), 'workspace.write_text', 'denied'],
      [bridgeCallId(scriptHash, 2), 'math.evaluate', 'succeeded'],
    ]);
  }, 60_000);

  it('the call past the turn’s maximum is refused with bridge.calls_exhausted and never reaches the pipeline', async () => {
    const run = await openRun();
    const calls = Array.from({ length: MAXIMUM_CALLS + 1 }, (_, i) => ['math.evaluate', { expression: `${i} + 1` }] as const);
    const item = await run.orchestrate(programOf(calls));
    const lines = printed(item);
    expect(lines).toHaveLength(MAXIMUM_CALLS + 1);
    expect(lines.slice(0, MAXIMUM_CALLS).every((l) => l.status === 'succeeded')).toBe(true);
    expect(lines[MAXIMUM_CALLS]).toMatchObject({ status: 'failed', reason: 'bridge.calls_exhausted' });
    expect((await rowsOf(run.runId)).length).toBe(1 + MAXIMUM_CALLS);
  }, 60_000);

  it('budget: the orchestration itself is refunded; its calls spend the run’s tool-call budget and stop at what is left', async () => {
    // A budget of 2: the orchestration is not charged, its first two calls are, the third is refused.
    const run = await openRun({ maximumToolCalls: 2 });
    const calls = [0, 1, 2].map((i) => ['math.evaluate', { expression: `${i} * 2` }] as const);
    const item = await run.orchestrate(programOf(calls));
    expect(item.outcome.status).toBe('succeeded');
    expect(printed(item).map((l) => l.reason)).toEqual(['tool.ok', 'tool.ok', 'bridge.calls_exhausted']);
    // The budget is spent: a direct call is refused before dispatch, an orchestration still runs (refunded) …
    const direct = await run.call('math.evaluate', { expression: '1' });
    expect(direct.outcome.reason_code).toBe('tool.budget_exhausted');
    const again = await run.orchestrate(programOf([['math.evaluate', { expression: '9' }]]));
    expect(again.outcome.status).toBe('succeeded');
    // … and its calls are capped at zero.
    expect(printed(again).map((l) => l.reason)).toEqual(['bridge.calls_exhausted']);
  }, 60_000);

  it('a program that fails is a result: its exit code and stderr, untrusted; a language other than javascript is refused', async () => {
    const run = await openRun();
    const item = await run.orchestrate('console.error("boom-" + (6 * 7)); process.exit(3);');
    expect(item.outcome.status).toBe('succeeded');
    expect(text(item)).toContain('Exit code 3.');
    expect(text(item)).toContain('boom-42');
    expect(text(item)).toContain('--- tool calls (0) ---');
    const python = await run.call('sandbox.run_orchestration', { language: 'python', source: 'print(1)' });
    expect(python.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.arguments_invalid' });
  }, 60_000);
});
