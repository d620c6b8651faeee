import { createHash } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { ToolSpec } from '@veetbot/domain';
import { executeToolCall, type ToolCallRequest } from '@veetbot/executor';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { AjvSchemaValidator } from '@veetbot/validation';
import { compare, fmt } from './harness';
import { targetLine } from './targets';

function tenPropertySchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) properties[`p${i}`] = i % 2 === 0 ? { type: 'string', maxLength: 64 } : { type: 'integer', minimum: 0 };
  return { type: 'object', properties, required: ['p0'], additionalProperties: false };
}

/**
 * Issue 2's benchmark: steps 1–7 for a call with a 10-property schema, against bare ajv
 * validation plus sha256 of the same arguments. Target: ratio ≤ 3 and ≥ 50,000 calls/s.
 */
export async function benchPipelineStepsOneToSeven(): Promise<string[]> {
  const schema = tenPropertySchema();
  const args: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) args[`p${i}`] = i % 2 === 0 ? `value-${i}` : i;

  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1 << 20, flags: {} });
  registry.registerBuiltins([
    {
      spec: ToolSpec.parse({
        name: 'demo.bench',
        version: '1',
        description: 'bench',
        input_schema: schema,
        output_schema: null,
        side_effect: 'none',
        risk: 'low',
        idempotency: 'read_only',
        required_scopes: ['demo.use'],
        timeout_seconds: 5,
        maximum_output_bytes: 4096,
        allow_parallel: true,
        output_trust: 'internal_tool',
      }),
      execute: async () => ({ ok: true, content: [] }),
    },
  ]);
  const deps = { registry, validator, policy: new DefaultPolicyEngine(), clock: { now: () => new Date() } };
  const session = { agent: { agentId: 'bench' }, pinned: null };
  const request: ToolCallRequest = {
    tenantId: 't',
    principal: { tenant_id: 't', principal_id: 'p', scopes: ['demo.use'] },
    sessionId: 's',
    runId: 'r',
    stepNumber: 1,
    callId: 'c',
    toolName: 'demo.bench',
    arguments: args,
    origin: 'model',
    contextTrust: ['user'],
  };
  const check = await executeToolCall(deps, session, request, { dryRun: true });
  if (check.kind !== 'authorized') throw new Error(`bench call not authorized: ${check.kind}`);

  const ajv = new Ajv2020({ useDefaults: true });
  const validate = ajv.compile(schema);
  const baseline = () => {
    const copy = { ...args };
    if (!validate(copy)) throw new Error('invalid');
    return createHash('sha256').update(JSON.stringify(copy)).digest('hex');
  };
  const subject = () => executeToolCall(deps, session, request, { dryRun: true });

  const r = await compare(
    { name: 'ajv + sha256', fn: baseline },
    { name: 'steps 1–7', fn: subject },
    { batch: 20_000, rounds: 7, warmup: 2 },
  );
  return [
    `pipeline steps 1–7 (10-property schema): ${fmt(r.subject.opsPerSecond)} calls/s on one core (${fmt(r.subject.nsPerOp)} ns/call)`,
    `baseline bare ajv validation + sha256:  ${fmt(r.baseline.opsPerSecond)} ops/s (${fmt(r.baseline.nsPerOp)} ns/op)`,
    targetLine('steps-1-7-vs-floor', r.ratio),
    targetLine('steps-1-7-calls-per-s', r.subject.opsPerSecond),
  ];
}
