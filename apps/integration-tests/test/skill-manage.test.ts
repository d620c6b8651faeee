import { randomUUID } from 'node:crypto';
import { ToolResult } from '@veetbot/domain';
import type { SkillStore, Tool, ToolExecutionContext } from '@veetbot/ports';
import { createBuiltinReconcilers, createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drivers, openTestDatabase, T0, TestClock, type TestDatabase } from '../src';

/*
 * skill.manage on the real store (docs/adr/0036), below the pipeline: Hard gate 3 (the watermark
 * precedes the first write), the replay its CONDITIONALLY_IDEMPOTENT class promises, the bounds
 * JSON Schema cannot state, and the per-operation requirements its schema states (the real ajv).
 */

interface Observed {
  readonly store: SkillStore;
  readonly timeline: string[];
}

/** The real store, with every write logged in one timeline with markEffectSent. Reads pass through. */
function observed(store: SkillStore): Observed {
  const timeline: string[] = [];
  return {
    timeline,
    store: {
      create: (tenantId, skill) => {
        timeline.push('store.create');
        return store.create(tenantId, skill);
      },
      delete: (tenantId, name) => {
        timeline.push('store.delete');
        return store.delete(tenantId, name);
      },
      get: (...a) => store.get(...a),
      list: (...a) => store.list(...a),
    },
  };
}

function contextFor(tenantId: string, idempotencyKey: string, onMark: () => Promise<void> | void = () => undefined): ToolExecutionContext {
  return {
    invocationId: randomUUID(),
    callId: 'call_1',
    runId: randomUUID(),
    sessionId: randomUUID(),
    tenantId,
    principal: { tenant_id: tenantId, principal_id: 'p', scopes: ['skill.write'] },
    stepNumber: 1,
    attemptNumber: 1,
    idempotencyKey,
    deadlineAt: new Date(Date.now() + 30_000),
    timeoutSeconds: 10,
    maximumOutputBytes: 65_536,
    target: { kind: 'in_process', serverId: null, deviceId: null },
    workspace: null,
    artifacts: { write: () => Promise.reject(new Error('no artifacts')) },
    credentials: { resolve: () => Promise.reject(new Error('no credentials')) },
    cancellation: new AbortController().signal,
    markEffectSent: async () => {
      await onMark();
    },
  };
}

const key = (c: string) => c.repeat(64);

describe.each(drivers())('skill.manage on the store (%s)', (driver) => {
  let db: TestDatabase;
  let tenantId: string;
  beforeAll(async () => {
    db = await openTestDatabase(driver);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  const fresh = async () => {
    tenantId = `sm-${randomUUID()}`;
    await db.stores.tenants.create({ id: tenantId, name: 'skill.manage test', createdAt: T0 });
  };
  const toolOver = (store: SkillStore, clock = new TestClock(T0)): Tool =>
    createBuiltinTools({ skills: store, clock }).find((t) => t.spec.name === 'skill.manage') as Tool;
  const run = async (tool: Tool, args: Record<string, unknown>, ctx: ToolExecutionContext) =>
    ToolResult.parse(await tool.execute(args, ctx));

  it('Hard gate 3: every write (create, update, delete) comes after markEffectSent, and nothing had changed at the mark', async () => {
    await fresh();
    const o = observed(db.stores.skills);
    const tool = toolOver(o.store);
    const scenarios: [Record<string, unknown>, string][] = [
      [{ operation: 'create', name: 'triage', description: 'd', content: 'c1' }, 'store.create'],
      [{ operation: 'update', name: 'triage', content: 'c2' }, 'store.create'],
      [{ operation: 'delete', name: 'triage' }, 'store.delete'],
    ];
    for (const [i, [args, write]] of scenarios.entries()) {
      o.timeline.length = 0;
      const before = JSON.stringify(await db.stores.skills.list(tenantId));
      let atMark: string | null = null;
      const result = await run(
        tool,
        args,
        contextFor(tenantId, key(String(i)), async () => {
          o.timeline.push('markEffectSent');
          atMark ??= JSON.stringify(await db.stores.skills.list(tenantId));
        }),
      );
      expect(result.failure, String(args.operation)).toBeNull();
      expect(o.timeline).toEqual(['markEffectSent', write]);
      expect(atMark).toBe(before);
      expect(JSON.stringify(await db.stores.skills.list(tenantId))).not.toBe(before);
    }
    // list reads only: no watermark, no write.
    o.timeline.length = 0;
    expect((await run(tool, { operation: 'list' }, contextFor(tenantId, key('9')))).failure).toBeNull();
    expect(o.timeline).toEqual([]);
  });

  it("its reconciler (docs/adr/0063) reads the store: the key's row → applied, no row → unknown, a delete with older versions left → not_applied", async () => {
    await fresh();
    const tool = toolOver(db.stores.skills);
    const reconciler = createBuiltinReconcilers({ skills: db.stores.skills }).forTool('skill.manage', '1.0.0')!;
    const ask = (idempotencyKey: string, args: Record<string, unknown>, watermarkAt = T0) =>
      reconciler.reconcile({
        tenantId,
        runId: randomUUID(),
        invocationId: randomUUID(),
        toolName: 'skill.manage',
        toolVersion: '1.0.0',
        idempotencyKey,
        arguments: args,
        watermarkAt,
        workspace: async () => null,
        signal: new AbortController().signal,
      });
    const create = { operation: 'create', name: 'triage', description: 'd', content: 'c1' };
    expect((await run(tool, create, contextFor(tenantId, key('r')))).failure).toBeNull();
    expect(await ask(key('r'), create)).toMatchObject({ outcome: 'applied', evidence: expect.stringContaining('triage version 1') });
    // Another key wrote nothing: absence alone proves nothing (a later delete removes rows too).
    expect((await ask(key('s'), create)).outcome).toBe('unknown');
    expect((await ask(key('r'), { ...create, content: 'other' })).outcome).toBe('unknown');
    // A delete whose watermark is after version 1 was created: version 1 still there → it never ran.
    const later = new Date(T0.getTime() + 60_000);
    expect(await ask(key('t'), { operation: 'delete', name: 'triage' }, later)).toMatchObject({ outcome: 'not_applied' });
    expect((await run(tool, { operation: 'delete', name: 'triage' }, contextFor(tenantId, key('t')))).failure).toBeNull();
    expect((await ask(key('t'), { operation: 'delete', name: 'triage' }, later)).outcome).toBe('unknown');
  });

  it('replay with the same idempotency key returns the row that key wrote; another key is skill_exists', async () => {
    await fresh();
    const tool = toolOver(db.stores.skills);
    const create = { operation: 'create', name: 'triage', description: 'd', content: 'c1' };
    const first = await run(tool, create, contextFor(tenantId, key('a')));
    const replay = await run(tool, create, contextFor(tenantId, key('a')));
    expect(first.structured).toMatchObject({ skill: { version: '1' }, replayed: false });
    expect(replay.structured).toMatchObject({ skill: { version: '1' }, replayed: true });
    expect((await run(tool, create, contextFor(tenantId, key('b')))).failure?.reason_code).toBe('tool.invalid_arguments.skill_exists');

    const update = { operation: 'update', name: 'triage', content: 'c2' };
    expect((await run(tool, update, contextFor(tenantId, key('c')))).structured).toMatchObject({
      skill: { version: '2' },
      replayed: false,
    });
    expect((await run(tool, update, contextFor(tenantId, key('c')))).structured).toMatchObject({ skill: { version: '2' }, replayed: true });
    expect((await db.stores.skills.list(tenantId)).map((r) => r.version)).toEqual(['1', '2']);

    const remove = { operation: 'delete', name: 'triage' };
    expect((await run(tool, remove, contextFor(tenantId, key('d')))).structured).toMatchObject({ deleted_versions: 2 });
    // A replayed delete finds the state it asked for.
    expect((await run(tool, remove, contextFor(tenantId, key('d')))).structured).toMatchObject({ deleted_versions: 0 });
  });

  it('update: an explicit version must be new; without one, a non-integer latest needs one', async () => {
    await fresh();
    const tool = toolOver(db.stores.skills);
    await run(
      tool,
      { operation: 'create', name: 'named', version: 'alpha', description: 'd', content: 'c' },
      contextFor(tenantId, key('a')),
    );
    const bare = await run(tool, { operation: 'update', name: 'named', content: 'c2' }, contextFor(tenantId, key('b')));
    expect(bare.failure?.reason_code).toBe('tool.invalid_arguments.skill_version');
    const taken = await run(tool, { operation: 'update', name: 'named', version: 'alpha', content: 'c2' }, contextFor(tenantId, key('c')));
    expect(taken.failure?.reason_code).toBe('tool.invalid_arguments.skill_version');
    const given = await run(tool, { operation: 'update', name: 'named', version: 'beta', content: 'c2' }, contextFor(tenantId, key('d')));
    expect(given.structured).toMatchObject({ skill: { version: 'beta' } });
    const missing = await run(tool, { operation: 'update', name: 'nothing', content: 'c' }, contextFor(tenantId, key('e')));
    expect(missing.failure?.reason_code).toBe('tool.not_found.skill');
  });

  it('refuses what JSON Schema cannot: bytes over 64 KiB / 1 KiB, and a create in the mcp. prefix', async () => {
    await fresh();
    const tool = toolOver(db.stores.skills);
    // 33,000 two-byte characters: within maxLength (code points), over 64 KiB of UTF-8.
    const wide = 'é'.repeat(33_000);
    const cases: [Record<string, unknown>, string][] = [
      [{ operation: 'create', name: 'wide', description: 'd', content: wide }, 'tool.invalid_arguments.skill_too_large'],
      [{ operation: 'create', name: 'wide', description: 'é'.repeat(600), content: 'c' }, 'tool.invalid_arguments.skill_too_large'],
      [{ operation: 'create', name: 'mcp.docs.mine', description: 'd', content: 'c' }, 'tool.invalid_arguments.skill_name_reserved'],
    ];
    for (const [args, code] of cases) expect((await run(tool, args, contextFor(tenantId, key('f')))).failure?.reason_code).toBe(code);
    expect(await db.stores.skills.list(tenantId)).toEqual([]);
    // Exactly at the bound is accepted.
    const exact = await run(
      tool,
      { operation: 'create', name: 'exact', description: 'd', content: 'x'.repeat(64 * 1024) },
      contextFor(tenantId, key('g')),
    );
    expect(exact.failure).toBeNull();
  });

  it('its input schema requires, per operation, what the operation needs (the real ajv validator)', () => {
    const tool = toolOver(db.stores.skills);
    const validator = new AjvSchemaValidator();
    expect(validator.admit(tool.spec.input_schema).ok).toBe(true);
    const valid = (args: unknown) =>
      validator.validateArguments({ toolName: 'skill.manage', toolVersion: tool.spec.version }, tool.spec.input_schema, args).valid;
    expect(valid({ operation: 'list' })).toBe(true);
    expect(valid({ operation: 'create', name: 'a', description: 'd', content: 'c' })).toBe(true);
    expect(valid({ operation: 'create', name: 'a', description: 'd' })).toBe(false);
    expect(valid({ operation: 'create', name: 'a', content: 'c' })).toBe(false);
    expect(valid({ operation: 'update', name: 'a', content: 'c' })).toBe(true);
    expect(valid({ operation: 'update', name: 'a' })).toBe(false);
    expect(valid({ operation: 'delete', name: 'a' })).toBe(true);
    expect(valid({ operation: 'delete' })).toBe(false);
    expect(valid({ operation: 'rename', name: 'a' })).toBe(false);
    expect(valid({ operation: 'create', name: 'Bad Name', description: 'd', content: 'c' })).toBe(false);
    expect(valid({ operation: 'create', name: 'a', description: 'd', content: 'c', source: 'operator' })).toBe(false);
    expect(valid({ operation: 'create', name: 'a', description: 'd', content: 'c', required_tools: ['x.y', 'x.y'] })).toBe(false);
  });
});
