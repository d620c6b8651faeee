import { describe, expect, it } from 'vitest';
import type { ToolExecutionContext } from '@veetbot/ports';
import { concludedOf, drivers, TEST_TOKEN_VALUE, type PipelineHarness } from '../src';
import { unwrapEnvelope, usePipelineHarness } from './pipeline-suite';

/**
 * § ToolExecutionContext: credentials is a resolver, not a dictionary; the resolved value never
 * enters a ToolResult and is scrubbed from any string the tool returns. And what is not on the
 * context is the specification: no database, no repository, no policy engine, no registry, no
 * other tool.
 */
const REDACTED = '[redacted credential]';

/** § ToolExecutionContext, field for field (camelCase, RULINGS.md "Naming"). */
const CONTEXT_FIELDS = [
  'invocationId',
  'callId',
  'runId',
  'sessionId',
  'tenantId',
  'principal',
  'stepNumber',
  'attemptNumber',
  'idempotencyKey',
  'deadlineAt',
  'timeoutSeconds',
  'maximumOutputBytes',
  'target',
  'workspace',
  'artifacts',
  'credentials',
  'cancellation',
  'markEffectSent',
];

/** Every object reachable from `root` through own properties and prototypes (closures are opaque, #private fields invisible). */
function reachableFrom(root: unknown, maximumDepth = 8): Set<unknown> {
  const seen = new Set<unknown>();
  const queue: [unknown, number][] = [[root, 0]];
  while (queue.length > 0) {
    const [value, depth] = queue.shift()!;
    if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) continue;
    seen.add(value);
    if (depth >= maximumDepth) continue;
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (descriptor !== undefined && 'value' in descriptor) queue.push([descriptor.value, depth + 1]);
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== null && proto !== Object.prototype && proto !== Function.prototype) queue.push([proto, depth + 1]);
  }
  return seen;
}

/** What a tool must never reach, by identity: the stores, the database, the pipeline's parts, the unscrubbed broker, every tool. */
function forbidden(h: PipelineHarness): Map<unknown, string> {
  const out = new Map<unknown, string>();
  out.set(h.stores, 'stores');
  for (const [name, store] of Object.entries(h.stores)) out.set(store, `stores.${name}`);
  out.set(h.database, 'test database');
  out.set(h.database.database, 'database');
  out.set(h.registry, 'registry');
  out.set(h.policy, 'policy engine');
  out.set(h.validator, 'validator');
  out.set(h.worker.deps, 'pipeline deps');
  out.set(h.worker.durable, 'durable deps');
  out.set(h.worker.durable.inFlight, 'in-flight set');
  out.set(h.credentials, 'the unscrubbed credential broker');
  for (const spec of h.registry.list()) out.set(h.registry.get(spec.name), `tool ${spec.name}`);
  return out;
}

describe.each(drivers())('executor credentials (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  it('a credential returned base64-encoded (also mid-blob at each byte offset) and URL-encoded is redacted too (ADR 0018)', async () => {
    const h = scene();
    const result = concludedOf(await h.execute(h.call('demo.secret_echo', { mode: 'encoded' })));
    expect(result.invocationStatus).toBe('succeeded');
    const row = (await h.stores.invocations.listForRun(h.tenantId, h.runId)).find((r) => r.callId === result.item.call_id)!;
    const bytes = Buffer.from(TEST_TOKEN_VALUE);
    const cores = [0, 1, 2].map((k) =>
      Buffer.concat([Buffer.alloc(k), bytes])
        .toString('base64')
        .slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6)),
    );
    for (const where of [JSON.stringify(result.item), JSON.stringify(row.result)]) {
      expect(where).not.toContain(TEST_TOKEN_VALUE);
      for (const core of cores) expect(where).not.toContain(core);
      expect(where).not.toContain(cores[0]!.replace(/\+/g, '-').replace(/\//g, '_'));
      expect(where).toContain(REDACTED);
    }
  });

  it('a credential returned in content and structured is replaced everywhere, in the item and the row', async () => {
    const h = scene();
    const request = h.call('demo.secret_echo', { mode: 'success' });
    const result = concludedOf(await h.execute(request));
    expect(result.invocationStatus).toBe('succeeded');

    const [part] = result.item.content;
    expect(part?.type).toBe('text');
    expect(unwrapEnvelope(part?.type === 'text' ? part.text : '')?.body).toBe(`token=${REDACTED}; again ${REDACTED}`);
    expect(result.item.structured).toEqual({
      token: REDACTED,
      nested: { list: [REDACTED, `prefix-${REDACTED}-suffix`] },
      [`key-${REDACTED}`]: true,
    });
    expect(JSON.stringify(result)).not.toContain(TEST_TOKEN_VALUE);

    const row = await h.invocationOfCall(request.callId);
    expect(JSON.stringify(row)).not.toContain(TEST_TOKEN_VALUE);
    expect(JSON.stringify(row.result)).toContain(REDACTED);
    for (const event of await h.events()) expect(JSON.stringify(event)).not.toContain(TEST_TOKEN_VALUE);
  });

  it('a credential in a failure detail and its external text is replaced in the item and the row', async () => {
    const h = scene();
    const request = h.call('demo.secret_echo', { mode: 'failure' });
    const result = concludedOf(await h.execute(request));
    expect(result.item.outcome.reason_code).toBe('tool.permission.token_rejected');
    expect(JSON.stringify(result)).not.toContain(TEST_TOKEN_VALUE);
    const [part] = result.item.content;
    expect(unwrapEnvelope(part?.type === 'text' ? part.text : '')).toMatchObject({
      trust: 'external_untrusted',
      body: `server echoed ${REDACTED}`,
    });

    const row = await h.invocationOfCall(request.callId);
    expect(JSON.stringify(row)).not.toContain(TEST_TOKEN_VALUE);
    expect(row.error).toMatchObject({ detail: `token ${REDACTED} was rejected`, external_text: `server echoed ${REDACTED}` });
  });

  it('a credential in a thrown error is replaced in the recorded detail', async () => {
    const h = scene();
    const request = h.call('demo.secret_echo', { mode: 'throw' });
    const result = concludedOf(await h.execute(request));
    expect(result.item.outcome.reason_code).toBe('tool.internal');
    const row = await h.invocationOfCall(request.callId);
    expect(JSON.stringify(row)).not.toContain(TEST_TOKEN_VALUE);
    expect(JSON.stringify(row.error)).toContain(`token ${REDACTED} was rejected`);
  });

  it('the context has exactly the specified fields, and reaches no store, registry, policy, broker or tool', async () => {
    const h = scene();
    concludedOf(await h.execute(h.call('demo.secret_echo', { mode: 'success' })));
    const context: ToolExecutionContext = h.probe('demo.secret_echo').last().context;

    expect(Object.keys(context).sort()).toEqual([...CONTEXT_FIELDS].sort());
    expect(Reflect.ownKeys(context).length).toBe(CONTEXT_FIELDS.length);
    // The artifact writer only writes; the resolver only resolves.
    expect(Object.keys(context.artifacts)).toEqual(['write']);
    expect(typeof context.credentials.resolve).toBe('function');
    // The token never sits on the context itself.
    expect(JSON.stringify(context)).not.toContain(TEST_TOKEN_VALUE);

    const reached = reachableFrom(context);
    const leaks = [...forbidden(h)].filter(([object]) => reached.has(object)).map(([, name]) => name);
    expect(leaks).toEqual([]);
  });
});
