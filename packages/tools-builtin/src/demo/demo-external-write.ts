import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { errnoCode, toolFailure, toolSuccess } from '../tool-result-helpers';

export const OUTBOX_LINE_MAX_LENGTH = 2_000;

export const demoExternalWriteSpec = defineBuiltinSpec({
  name: 'demo.external_write',
  version: '1.0.0',
  description:
    'Send one line to the demo outbox, an external system outside the workspace. Every call appends: ' +
    'sending the same line twice sends it twice.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      line: {
        type: 'string',
        minLength: 1,
        maxLength: OUTBOX_LINE_MAX_LENGTH,
        pattern: '^[^\\r\\n]*$',
        description: 'One line of text, without line breaks.',
      },
    },
    required: ['line'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      bytes_written: { type: 'integer', minimum: 1 },
      idempotency_key: { type: 'string' },
    },
    required: ['bytes_written', 'idempotency_key'],
    additionalProperties: false,
  },
  // The reference effect that must never happen twice: an append has no natural key, so a
  // repeat is a duplicate. Recovery finds effect_sent_at set and stops at UNCERTAIN.
  side_effect: 'external_write',
  risk: 'medium',
  idempotency: 'non_idempotent',
  required_scopes: ['demo.write'],
  timeout_seconds: 10,
  maximum_output_bytes: 4_096,
  allow_parallel: false,
  output_trust: 'internal_tool',
});

export interface DemoExternalWriteOptions {
  /** Absolute path of the outbox file (see resolveOutboxPath). */
  readonly outboxPath: string;
  /**
   * FOR TESTS ONLY. Awaited after the watermark and before the outbox is touched, so a crash
   * test can kill the process exactly in the window the recovery table calls UNCERTAIN with
   * nothing sent.
   */
  readonly beforeEffect?: (() => Promise<void>) | undefined;
  /**
   * Awaited after the line is appended and before the result is returned: a crash test's hook,
   * or the operator's simulated answer delay of the external system (VEETBOT_DEMO_OUTBOX_ACK_MS).
   */
  readonly afterEffect?: (() => Promise<void>) | undefined;
}

const NEWLINE = /[\r\n]/;

export function createDemoExternalWriteTool(options: DemoExternalWriteOptions): Tool {
  const outboxPath = path.resolve(options.outboxPath);
  let folderReady = false;
  return {
    spec: demoExternalWriteSpec,
    async execute(args, ctx) {
      const line = args.line;
      // The schema already said so; a line break here would forge a second record.
      if (typeof line !== 'string' || line.length === 0 || NEWLINE.test(line)) {
        return toolFailure('invalid_arguments', 'line', 'line must be one non-empty line of text');
      }
      if (ctx.idempotencyKey === '' || /[\t\r\n]/.test(ctx.idempotencyKey)) {
        return toolFailure('internal', 'idempotency_key', 'The idempotency key cannot be written as a record field');
      }
      if (ctx.cancellation.aborted) {
        return toolFailure('internal', 'cancelled', 'Cancelled before sending; nothing was sent');
      }
      const record = `${ctx.idempotencyKey}\t${line}\n`;

      // § The effect watermark: committed before the outbox is opened. From here on a crash
      // is UNCERTAIN, never a silent re-send.
      await ctx.markEffectSent();
      await options.beforeEffect?.();
      try {
        // One synchronous O_APPEND write of one short record: about 10 µs, where the promise
        // API's mkdir + open + write + close cost about 750 µs in thread-pool hand-offs on our
        // machines (measured; ADR 0013) — more than a commit. The folder is made once.
        if (!folderReady) {
          mkdirSync(path.dirname(outboxPath), { recursive: true });
          folderReady = true;
        }
        appendFileSync(outboxPath, record, { encoding: 'utf8', flag: 'a' });
      } catch (error) {
        // Not retryable: a failed append may still have written part of the record.
        return toolFailure('internal', 'outbox_write', `Appending to the outbox failed (${errnoCode(error) ?? 'unknown error'})`);
      }
      await options.afterEffect?.();
      return toolSuccess('Sent one line to the outbox.', {
        bytes_written: Buffer.byteLength(record),
        idempotency_key: ctx.idempotencyKey,
      });
    },
  };
}
