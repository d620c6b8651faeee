/**
 * Hard gate 3: "Every NON_IDEMPOTENT and CONDITIONALLY_IDEMPOTENT builtin sets the effect
 * watermark before its first outbound operation." Checked, more strictly, for every builtin
 * whose side_effect is not NONE as well, and enumerated from createBuiltinTools() so a new
 * builtin is covered the day it is added (and fails here until it has a scenario).
 *
 * Two independent observers, because either alone can be fooled:
 *  1. node:fs/promises is instrumented: every mutating call (open for writing, writeFile,
 *     appendFile, mkdir, rename, link, unlink, …) is logged in one ordered timeline together
 *     with the moment markEffectSent is called.
 *  2. The file system itself is snapshotted before the call, inside markEffectSent, and after:
 *     whatever API a tool uses, the state at the watermark must equal the state before.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isReadOnlySideEffect, ToolResult, type ToolSpec } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUILTIN_TOOL_NAMES, createBuiltinTools } from '../src/builtin-tools';
import { createFakeContext } from './fake-context';
import { createTempWorkspace, type TempWorkspace } from './temp-workspace';

const log = vi.hoisted(() => ({ recording: false, timeline: [] as string[] }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const { constants } = await import('node:fs');
  const WRITE_BITS = constants.O_WRONLY | constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_TRUNC;
  const writes = (flags: unknown): boolean =>
    typeof flags === 'number' ? (flags & WRITE_BITS) !== 0 : typeof flags === 'string' ? /[wa+]/.test(flags) : false;
  const record = (event: string): void => {
    if (log.recording) log.timeline.push(event);
  };
  const MUTATORS = [
    'appendFile',
    'chmod',
    'chown',
    'copyFile',
    'cp',
    'lchown',
    'link',
    'lutimes',
    'mkdir',
    'mkdtemp',
    'rename',
    'rm',
    'rmdir',
    'symlink',
    'truncate',
    'unlink',
    'utimes',
    'writeFile',
  ] as const;
  const instrumented: Record<string, unknown> = { ...actual };
  for (const name of MUTATORS) {
    const original = actual[name] as (...args: unknown[]) => unknown;
    instrumented[name] = (...args: unknown[]) => {
      record(`fs.${name}`);
      return original(...args);
    };
  }
  instrumented.open = (file: unknown, flags?: unknown, mode?: unknown) => {
    if (writes(flags)) record('fs.open(write)');
    return (actual.open as (...args: unknown[]) => unknown)(file, flags, mode);
  };
  return { ...instrumented, default: instrumented };
});

const WATERMARK = 'markEffectSent';

interface Scenario {
  readonly label: string;
  readonly args: Record<string, unknown>;
  readonly setup?: (ws: TempWorkspace) => void;
}

/**
 * One or more calls per builtin that SUCCEED, so the effect really happens and its order can
 * be observed. A builtin without an entry fails the first test below.
 */
const SCENARIOS: Readonly<Record<string, readonly Scenario[]>> = {
  'math.evaluate': [{ label: 'evaluate', args: { expression: '6 * 7' } }],
  'system.time': [{ label: 'now', args: { timezone: 'Europe/Paris' } }],
  'workspace.read_text': [{ label: 'read', args: { path: 'existing.txt' } }],
  'workspace.list': [{ label: 'list', args: { path: '.' } }],
  'workspace.write_text': [
    { label: 'new file in new folders', args: { path: 'a/b/new.txt', text: 'fresh' } },
    { label: 'overwrite', args: { path: 'existing.txt', text: 'replaced' } },
    { label: 'create', args: { path: 'created.txt', text: 'once', mode: 'create' } },
  ],
  'demo.external_write': [
    { label: 'first send', args: { line: 'hello outbox' } },
    { label: 'append to an existing outbox', args: { line: 'again' }, setup: (ws) => writeFileSync(outboxOf(ws), 'earlier\tline\n') },
  ],
};

const outboxOf = (ws: TempWorkspace): string => path.join(ws.base, 'outbox.log');

/** Every path under `dir` with its type, mode, size and content hash (or link target). */
function snapshot(dir: string): string {
  const lines: string[] = [];
  const walk = (current: string): void => {
    for (const name of readdirSync(current).sort()) {
      const full = path.join(current, name);
      const stats = lstatSync(full);
      const rel = path.relative(dir, full);
      if (stats.isSymbolicLink()) lines.push(`${rel} -> ${readlinkSync(full)}`);
      else if (stats.isDirectory()) {
        lines.push(`${rel}/ ${stats.mode.toString(8)}`);
        walk(full);
      } else lines.push(`${rel} ${stats.mode.toString(8)} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
    }
  };
  walk(dir);
  return lines.join('\n');
}

interface Observation {
  readonly result: ToolResult;
  readonly timeline: readonly string[];
  readonly before: string;
  readonly atWatermark: string | null;
  readonly after: string;
}

async function observe(tool: Tool, args: Record<string, unknown>, ws: TempWorkspace): Promise<Observation> {
  const before = snapshot(ws.base);
  let atWatermark: string | null = null;
  const fake = createFakeContext({
    workspaceRoot: ws.root,
    onMarkEffectSent: () => {
      log.timeline.push(WATERMARK);
      atWatermark ??= snapshot(ws.base);
    },
  });
  log.timeline = [];
  log.recording = true;
  let raw: unknown;
  try {
    raw = await tool.execute(args, fake.context);
  } finally {
    log.recording = false;
  }
  return { result: ToolResult.parse(raw), timeline: [...log.timeline], before, atWatermark, after: snapshot(ws.base) };
}

/** A write class: the tool's purpose is to change something. */
const writes = (spec: ToolSpec): boolean => !isReadOnlySideEffect(spec.side_effect);
const mustMark = (spec: ToolSpec): boolean =>
  spec.idempotency === 'non_idempotent' || spec.idempotency === 'conditionally_idempotent' || writes(spec);

/** Everything wrong with one observation, as sentences; empty when the gate holds. */
function violations(spec: ToolSpec, o: Observation): string[] {
  const found: string[] = [];
  const firstMutation = o.timeline.findIndex((e) => e !== WATERMARK);
  const firstMark = o.timeline.indexOf(WATERMARK);
  const changed = o.after !== o.before;
  if (firstMutation !== -1 && (firstMark === -1 || firstMark > firstMutation)) {
    found.push(`${o.timeline[firstMutation]} ran before markEffectSent (timeline: ${o.timeline.join(', ')})`);
  }
  if (changed && o.atWatermark === null) found.push('the file system changed and markEffectSent was never called');
  if (o.atWatermark !== null && o.atWatermark !== o.before)
    found.push('the file system had already changed when markEffectSent was called');
  if (mustMark(spec)) {
    if (firstMark === -1) found.push(`a ${spec.idempotency} / ${spec.side_effect} builtin succeeded without marking the watermark`);
    if (!changed) found.push('the scenario produced no effect, so the order was not tested');
  } else if (changed || firstMutation !== -1) {
    found.push(`declared ${spec.side_effect} but changed the file system`);
  }
  return found;
}

let ws: TempWorkspace;
beforeEach(() => {
  ws = createTempWorkspace();
  writeFileSync(path.join(ws.root, 'existing.txt'), 'already here');
});
afterEach(() => ws.cleanup());

// Without a store: the store-backed builtins (skill.manage, STORE_BACKED_TOOL_NAMES) write a
// database, not files; their gate runs on the real store in
// apps/integration-tests/test/skill-manage.test.ts ("Hard gate 3: every write …").
const ALL = createBuiltinTools();
const GATED = ALL.filter((tool) => mustMark(tool.spec) || tool.spec.side_effect !== 'none');

describe('Hard gate 3: the effect watermark precedes the first outbound operation', () => {
  it('has a scenario for every builtin createBuiltinTools() returns', () => {
    expect(ALL.map((t) => t.spec.name)).toEqual([...BUILTIN_TOOL_NAMES]);
    for (const tool of ALL) expect(SCENARIOS[tool.spec.name]?.length ?? 0, tool.spec.name).toBeGreaterThan(0);
  });

  it('covers every non-idempotent and conditionally idempotent builtin, and every builtin with a side effect', () => {
    const names = GATED.map((t) => t.spec.name);
    expect(names).toContain('demo.external_write');
    expect(names).toContain('workspace.write_text');
    for (const tool of ALL) {
      if (
        tool.spec.idempotency === 'non_idempotent' ||
        tool.spec.idempotency === 'conditionally_idempotent' ||
        tool.spec.side_effect !== 'none'
      ) {
        expect(names).toContain(tool.spec.name);
      }
    }
  });

  const cases = ALL.flatMap((tool) => (SCENARIOS[tool.spec.name] ?? []).map((s) => [tool.spec.name, s.label, s] as const));
  it.each(cases)('%s (%s)', async (name, _label, scenario) => {
    scenario.setup?.(ws);
    const tool = createBuiltinTools({ outboxPath: outboxOf(ws) }).find((t) => t.spec.name === name) as Tool;
    const observation = await observe(tool, scenario.args, ws);
    expect(observation.result.failure, 'the scenario must succeed so its effect is observed').toBeNull();
    expect(violations(tool.spec, observation)).toEqual([]);
  });

  it('demo.external_write: the outbox did not exist when the watermark was recorded', async () => {
    const tool = createBuiltinTools({ outboxPath: outboxOf(ws) }).find((t) => t.spec.name === 'demo.external_write') as Tool;
    const o = await observe(tool, { line: 'x' }, ws);
    expect(o.atWatermark).not.toContain('outbox.log');
    expect(o.after).toContain('outbox.log');
    expect(o.timeline[0]).toBe(WATERMARK);
  });
});

describe('the gate check itself can fail (negative controls)', () => {
  const spec = createBuiltinTools().find((t) => t.spec.name === 'demo.external_write')?.spec as ToolSpec;
  const fsPromises = () => import('node:fs/promises');

  it('catches an append made before the watermark', async () => {
    const outbox = outboxOf(ws);
    const early: Tool = {
      spec,
      async execute(_args, ctx) {
        await (await fsPromises()).appendFile(outbox, 'too early\n');
        await ctx.markEffectSent();
        return { ok: true, content: [], structured: {} };
      },
    };
    const found = violations(spec, await observe(early, {}, ws));
    expect(found.join('\n')).toContain('fs.appendFile ran before markEffectSent');
    expect(found.join('\n')).toContain('already changed when markEffectSent was called');
  });

  it('catches a write through an API the instrumentation does not see', async () => {
    const outbox = outboxOf(ws);
    const sneaky: Tool = {
      spec,
      async execute(_args, ctx) {
        appendFileSync(outbox, 'sync write\n');
        await ctx.markEffectSent();
        return { ok: true, content: [], structured: {} };
      },
    };
    expect(violations(spec, await observe(sneaky, {}, ws))).toEqual(['the file system had already changed when markEffectSent was called']);
  });

  it('catches a writer that never marks, and a reader that writes', async () => {
    const outbox = outboxOf(ws);
    const unmarked: Tool = {
      spec,
      async execute() {
        await (await fsPromises()).appendFile(outbox, 'x');
        return { ok: true, content: [], structured: {} };
      },
    };
    expect(violations(spec, await observe(unmarked, {}, ws))).toContain('the file system changed and markEffectSent was never called');
    const readerSpec = { ...spec, side_effect: 'workspace_read', idempotency: 'read_only' } as ToolSpec;
    expect(violations(readerSpec, await observe(unmarked, {}, ws))).toContain('declared workspace_read but changed the file system');
  });
});
