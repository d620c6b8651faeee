import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolSpec, type IdempotencyClass, type ToolSpecInput } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';

/**
 * The crash suites' tools (Hard gates 7 and 8, the fencing test): one per idempotency class
 * whose recovery the table decides, each with a countable effect — a line appended to its own
 * outbox file, `<idempotency_key>\t<attempt_number>\t<item>` — and the same two test hooks
 * demo.external_write has (beforeEffect after the watermark, afterEffect after the append), so a
 * process can be killed or paused exactly at the effect boundary. NON_IDEMPOTENT is
 * demo.external_write itself (the reference effect that must never happen twice).
 */

export interface EffectHooks {
  /** Awaited after the watermark and before the outbox is touched. */
  readonly beforeEffect?: (() => Promise<void>) | undefined;
  /** Awaited after the line is appended and before the result is returned. */
  readonly afterEffect?: (() => Promise<void>) | undefined;
}

/** Tool name -> the class it stands for. Every one has a non-NONE side effect: the executor sets the watermark first. */
export const CRASH_TOOLS = {
  'demo.crash_read': { side_effect: 'external_read', idempotency: 'read_only', risk: 'low' },
  'demo.crash_idempotent': { side_effect: 'external_write', idempotency: 'idempotent', risk: 'medium' },
  'demo.crash_conditional': { side_effect: 'external_write', idempotency: 'conditionally_idempotent', risk: 'medium' },
} as const satisfies Record<string, Partial<ToolSpecInput>>;
export type CrashToolName = keyof typeof CRASH_TOOLS;

/** The tool each idempotency class is exercised with. */
export const TOOL_FOR_CLASS: Readonly<Record<IdempotencyClass, string>> = {
  read_only: 'demo.crash_read',
  idempotent: 'demo.crash_idempotent',
  conditionally_idempotent: 'demo.crash_conditional',
  non_idempotent: 'demo.external_write',
};

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

function crashTool(name: CrashToolName, outboxPath: string, hooks: EffectHooks): Tool {
  const spec = ToolSpec.parse({
    name,
    version: '1.0.0',
    description: `Crash-test tool ${name}: appends one line per effect to its own outbox.`,
    input_schema: {
      $schema: DIALECT,
      type: 'object',
      properties: { item: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[^\\t\\r\\n]*$' } },
      required: ['item'],
      additionalProperties: false,
    },
    output_schema: null,
    required_scopes: [],
    // Long enough that a worker paused (SIGSTOP) inside the tool is not timed out by its own deadline.
    timeout_seconds: 60,
    maximum_output_bytes: 4096,
    allow_parallel: false,
    output_trust: 'internal_tool',
    ...CRASH_TOOLS[name],
  });
  return {
    spec,
    async execute(args, ctx) {
      // The executor has already committed the watermark; a tool may mark its own boundary too (a no-op now).
      await ctx.markEffectSent();
      await hooks.beforeEffect?.();
      await mkdir(path.dirname(outboxPath), { recursive: true });
      await appendFile(outboxPath, `${ctx.idempotencyKey}\t${ctx.attemptNumber}\t${String(args.item)}\n`, 'utf8');
      await hooks.afterEffect?.();
      return { ok: true, content: [{ type: 'text', text: `${name} done` }], structured: { idempotency_key: ctx.idempotencyKey } };
    },
  };
}

/** The outbox file of a tool (demo.external_write's included) inside an outbox folder. */
export function outboxFile(outboxDir: string, toolName: string): string {
  return path.join(outboxDir, `${toolName}.log`);
}

export function createCrashTools(outboxDir: string, hooks: EffectHooks = {}): Tool[] {
  return (Object.keys(CRASH_TOOLS) as CrashToolName[]).map((name) => crashTool(name, outboxFile(outboxDir, name), hooks));
}

/** One outbox record: demo.external_write writes `<key>\t<line>`, the crash tools `<key>\t<attempt>\t<item>`. */
export interface OutboxRecord {
  readonly key: string;
  readonly rest: string;
}

export async function readOutbox(file: string): Promise<OutboxRecord[]> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const tab = line.indexOf('\t');
      return { key: line.slice(0, tab), rest: line.slice(tab + 1) };
    });
}
