import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolResult } from '@veetbot/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../src/builtin-tools';
import { createDemoExternalWriteTool } from '../src/demo/demo-external-write';
import { DEFAULT_OUTBOX_RELATIVE_PATH, OUTBOX_PATH_ENV, resolveOutboxPath } from '../src/demo/outbox-path';
import { createFakeContext } from './fake-context';
import { createTempWorkspace, type TempWorkspace } from './temp-workspace';

let ws: TempWorkspace;
let outbox: string;
beforeEach(() => {
  ws = createTempWorkspace();
  outbox = path.join(ws.base, 'external', 'outbox.log');
});
afterEach(() => ws.cleanup());

const KEY_1 = '1'.repeat(64);
const KEY_2 = '2'.repeat(64);

async function send(line: string, key: string, hooks: { beforeEffect?: () => Promise<void>; afterEffect?: () => Promise<void> } = {}) {
  const tool = createDemoExternalWriteTool({ outboxPath: outbox, ...hooks });
  const fake = createFakeContext({ idempotencyKey: key, workspaceRoot: ws.root });
  const result = ToolResult.parse(await tool.execute({ line }, fake.context));
  return { result, fake };
}

describe('demo.external_write', () => {
  it('appends "<idempotency_key>\\t<line>\\n", one record per call, creating the outbox folder', async () => {
    const first = await send('hello world', KEY_1);
    expect(first.result.ok).toBe(true);
    expect(first.result.structured).toEqual({ bytes_written: 64 + 1 + 11 + 1, idempotency_key: KEY_1 });
    await send('second line', KEY_2);
    expect(readFileSync(outbox, 'utf8')).toBe(`${KEY_1}\thello world\n${KEY_2}\tsecond line\n`);
  });

  it('is non-idempotent by construction: the same call twice sends twice (deduplication is the pipeline’s job)', async () => {
    await send('same', KEY_1);
    await send('same', KEY_1);
    expect(readFileSync(outbox, 'utf8').split('\n').filter(Boolean)).toEqual([`${KEY_1}\tsame`, `${KEY_1}\tsame`]);
  });

  it('marks the watermark once, before the outbox exists, and runs the test hooks around the effect', async () => {
    const order: string[] = [];
    const tool = createDemoExternalWriteTool({
      outboxPath: outbox,
      beforeEffect: async () => {
        order.push(`before:${existsSync(outbox)}`);
      },
      afterEffect: async () => {
        order.push(`after:${readFileSync(outbox, 'utf8').includes('hooked')}`);
      },
    });
    const fake = createFakeContext({ idempotencyKey: KEY_1, onMarkEffectSent: () => void order.push(`mark:${existsSync(outbox)}`) });
    await tool.execute({ line: 'hooked' }, fake.context);
    expect(order).toEqual(['mark:false', 'before:false', 'after:true']);
    expect(fake.markEffectSentCalls()).toBe(1);
  });

  it.each(['two\nlines', 'carriage\rreturn', ''])('refuses %j without marking or writing', async (line) => {
    const { result, fake } = await send(line, KEY_1);
    expect(result.failure?.reason_code).toBe('tool.invalid_arguments.line');
    expect(fake.markEffectSentCalls()).toBe(0);
    expect(existsSync(outbox)).toBe(false);
  });

  it('reports a failed append after the watermark as a non-retryable internal failure', async () => {
    mkdirSync(outbox, { recursive: true }); // the outbox path is a directory: appendFile fails
    const { result, fake } = await send('x', KEY_1);
    expect(result.failure).toMatchObject({ kind: 'internal', reason_code: 'tool.internal.outbox_write', retryable: false });
    expect(fake.markEffectSentCalls()).toBe(1);
  });
});

describe('the outbox path', () => {
  it('prefers the option, then VEETBOT_OUTBOX_PATH, then ./.veetbot/outbox.log under the working directory', () => {
    const env = { [OUTBOX_PATH_ENV]: '/var/tmp/from-env.log' };
    expect(resolveOutboxPath({ outboxPath: '/srv/explicit.log', env, cwd: '/work' })).toBe('/srv/explicit.log');
    expect(resolveOutboxPath({ outboxPath: 'relative.log', env, cwd: '/work' })).toBe('/work/relative.log');
    expect(resolveOutboxPath({ env, cwd: '/work' })).toBe('/var/tmp/from-env.log');
    expect(resolveOutboxPath({ env: { [OUTBOX_PATH_ENV]: '' }, cwd: '/work' })).toBe(path.join('/work', DEFAULT_OUTBOX_RELATIVE_PATH));
    expect(resolveOutboxPath({ env: {}, cwd: '/work' })).toBe('/work/.veetbot/outbox.log');
  });

  it('createBuiltinTools wires the option into demo.external_write', async () => {
    const tool = createBuiltinTools({ outboxPath: outbox }).find((t) => t.spec.name === 'demo.external_write');
    await tool?.execute({ line: 'wired' }, createFakeContext({ idempotencyKey: KEY_1 }).context);
    expect(readFileSync(outbox, 'utf8')).toBe(`${KEY_1}\twired\n`);
  });
});

describe('crash points (a real child process killed at each hook)', () => {
  const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));

  it.each([
    ['before', false],
    ['after', true],
  ])('killed %s the effect: watermark committed, line written = %s', (crashAt, lineWritten) => {
    const markFile = path.join(ws.base, 'watermark');
    const run = spawnSync(process.execPath, ['--import', 'tsx', child], {
      cwd: path.dirname(child),
      env: { ...process.env, OUTBOX: outbox, MARK_FILE: markFile, CRASH_AT: crashAt, KEY: KEY_1 },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    expect(run.stdout).not.toContain('completed');
    // Either way the watermark is set: recovery must say UNCERTAIN, never re-send.
    expect(existsSync(markFile)).toBe(true);
    expect(existsSync(outbox) && readFileSync(outbox, 'utf8') === `${KEY_1}\tcrash test line\n`).toBe(lineWritten);
  });
});
