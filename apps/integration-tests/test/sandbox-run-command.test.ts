import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeSystem, type ComposedSystem } from '@veetbot/composition';
import type { Principal, ToolResultItem } from '@veetbot/domain';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_CACHE } from '../src/test-database';

/*
 * sandbox.run_command through the one pipeline (docs/adr/0037), composed as every process
 * composes it: the real bubblewrap adapter, the real registry and its target rules, the real
 * workspace folder. What the adapter's own tests prove about isolation is not repeated here;
 * this proves the wiring — pinned only where the runtime offers sandbox targets, the run's
 * workspace is the one the program writes, limits come back as stable reason codes, and the
 * output is labelled untrusted.
 */

let dataDir: string;
let database: Database;
let system: ComposedSystem;
const tenantId = 'sandbox-tenant';
const principal: Principal = { tenant_id: tenantId, principal_id: 'p', scopes: ['sandbox.run', 'workspace.read', 'workspace.write'] };
const CANARY = `sandbox-canary-${process.pid}`;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-sandbox-it-'));
  // A root worker runs bwrap as an unprivileged host user: the data folder must be traversable.
  await chmod(dataDir, 0o711);
  process.env.VEETBOT_SANDBOX_IT_CANARY = CANARY;
  database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
  system = await composeSystem({ database, dataDir, mcp: false });
  await system.stores.tenants.create({ id: tenantId, name: tenantId, createdAt: new Date() });
}, 60_000);

afterAll(async () => {
  delete process.env.VEETBOT_SANDBOX_IT_CANARY;
  await system?.close({ drainMs: 0 });
  await database?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function openRun(targetKinds: readonly ('in_process' | 'mcp' | 'sandbox' | 'web_provider' | 'browser_provider')[]) {
  const session = await system.runtime.openSession(tenantId, principal, { agentId: 'a' }, { flags: {}, targetKinds: [...targetKinds] });
  const run = await system.runtime.createRun(tenantId, session.id, { deadlineAt: new Date(Date.now() + 3_600_000) });
  let stepNumber = 0;
  return {
    session,
    runId: run.id,
    async call(toolName: string, args: Record<string, unknown>): Promise<ToolResultItem> {
      stepNumber += 1;
      const outcome = await system.runtime.submitStep({
        tenantId,
        runId: run.id,
        stepNumber,
        principal,
        calls: [{ callId: `c${stepNumber}`, toolName, arguments: args, contextTrust: ['user'] }],
      });
      expect(outcome.items).toHaveLength(1);
      return outcome.items[0] as ToolResultItem;
    },
  };
}

const text = (item: ToolResultItem) => item.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('sandbox.run_command, composed', () => {
  it('is registered and offered only because this host can run a sandbox', async () => {
    expect(system.sandbox).toEqual({ available: true });
    expect(system.registry.list().find((spec) => spec.name === 'sandbox.run_command')).toMatchObject({
      target_kind: 'sandbox',
      output_trust: 'external_untrusted',
    });
    expect(system.environment.targetKinds).toContain('sandbox');
    const offered = await openRun(system.environment.targetKinds);
    expect(offered.session.toolNames).toContain('sandbox.run_command');
    // A runtime environment without sandbox targets never pins it (§ Resolution's fourth filter).
    const inProcess = await openRun(['in_process']);
    expect(inProcess.session.toolNames).not.toContain('sandbox.run_command');
    expect(inProcess.session.toolNames).toContain('workspace.read_text');
  });

  it('runs a program in the run’s own workspace; its output is untrusted data and carries no worker secret', async () => {
    const run = await openRun(system.environment.targetKinds);
    const ran = await run.call('sandbox.run_command', {
      argv: ['sh', '-c', 'echo made-in-sandbox > made.txt; cat; echo; env; exit 4'],
      stdin: 'from-stdin',
    });
    expect(ran.outcome.status).toBe('succeeded');
    expect(ran.trust).toBe('external_untrusted');
    // A non-zero exit is a result the model reads, not a failure.
    expect(text(ran)).toContain('Exit code 4.');
    expect(text(ran)).toContain('from-stdin');
    expect(text(ran)).toContain('LANG=C.UTF-8');
    expect(text(ran)).not.toContain(CANARY);
    expect(text(ran)).not.toContain('DATABASE_URL');

    // The file is in this run's workspace, where workspace.read_text (in process) finds it.
    const read = await run.call('workspace.read_text', { path: 'made.txt' });
    expect(read.outcome.status).toBe('succeeded');
    expect(text(read)).toContain('made-in-sandbox');
    const tenants = await readdir(join(dataDir, 'workspaces'));
    const onDisk = await readFile(join(dataDir, 'workspaces', tenants[0] ?? '', run.runId, 'made.txt'), 'utf8');
    expect(onDisk).toBe('made-in-sandbox\n');
  });

  it('a credential the broker holds (a sealed tenant secret, the secrets key) is nowhere the program can look', async () => {
    const BROKER_CANARY = `broker-canary-${process.pid}-${Date.now()}`;
    const sealed = system.secretKeys.keyring.seal({ tenantId, name: 'SANDBOX_CANARY' }, BROKER_CANARY);
    await system.stores.tenantSecrets.put(tenantId, { name: 'SANDBOX_CANARY', ...sealed, at: new Date() });
    const keyText = system.secretKeys.path === null ? null : (await readFile(system.secretKeys.path, 'utf8')).trim();
    const run = await openRun(system.environment.targetKinds);
    // Everything the program can read that could hold it: its environment (both views), and every
    // file it can see outside /usr and /proc (the workspace, /tmp, /etc, /run, /opt, its home).
    const ran = await run.call('sandbox.run_command', {
      argv: [
        'sh',
        '-c',
        'env; tr "\\0" "\\n" < /proc/self/environ; for d in / /workspace /tmp /etc /run /opt "$HOME"; do ls -la "$d" 2>&1; done; ' +
          'find / -xdev \\( -path /proc -o -path /usr -o -path /sys \\) -prune -o -type f -readable -print 2>/dev/null | head -n 2000 | xargs -r cat 2>/dev/null | head -c 4000000',
      ],
      timeout_seconds: 30,
    });
    // Binary files were printed too: their NULs are U+FFFD, the result still readable.
    expect(ran.outcome.status).toBe('succeeded');
    const seen = text(ran);
    expect(seen).toContain('LANG=C.UTF-8');
    expect(seen).not.toContain(BROKER_CANARY);
    expect(seen).not.toContain(CANARY);
    // The key that opens the sealed row lives in the data folder, which the sandbox cannot see.
    expect(keyText).not.toBeNull();
    expect(seen).not.toContain(keyText);
  });

  it('a program past its time limit fails with tool.timeout.sandbox', async () => {
    const run = await openRun(system.environment.targetKinds);
    const started = Date.now();
    const item = await run.call('sandbox.run_command', { argv: ['sleep', '30'], timeout_seconds: 1 });
    expect(item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.timeout.sandbox' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a flood of output fails with tool.output_too_large.sandbox', async () => {
    const run = await openRun(system.environment.targetKinds);
    const item = await run.call('sandbox.run_command', { argv: ['sh', '-c', 'head -c 100000000 /dev/zero | tr "\\0" x'] });
    expect(item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.output_too_large.sandbox' });
  });
});

describe('without a sandbox', () => {
  it('the tool does not exist and no session is offered sandbox targets', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'veetbot-nosandbox-'));
    const db = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
    const bare = await composeSystem({ database: db, dataDir: dir, mcp: false, sandbox: false });
    try {
      expect(bare.sandbox.available).toBe(false);
      expect(bare.environment.targetKinds).not.toContain('sandbox');
      expect(bare.registry.list().map((spec) => spec.name)).not.toContain('sandbox.run_command');
      expect(bare.registry.list().map((spec) => spec.name)).toContain('workspace.read_text');
    } finally {
      await bare.close({ drainMs: 0 });
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
