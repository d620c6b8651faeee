import { performance } from 'node:perf_hooks';
import { ToolSpec } from '@veetbot/domain';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { ToolRegistryImpl } from '@veetbot/registry';
import { AjvSchemaValidator } from '@veetbot/validation';
import * as after from '../.bench-aa/src/index';
import * as before from './src/index';

const properties: Record<string, unknown> = {};
for (let i = 0; i < 10; i++) properties[`p${i}`] = i % 2 === 0 ? { type: 'string', maxLength: 64 } : { type: 'integer', minimum: 0 };
const schema = { type: 'object', properties, required: ['p0'], additionalProperties: false };
const args: Record<string, unknown> = {};
for (let i = 0; i < 10; i++) args[`p${i}`] = i % 2 === 0 ? `value-${i}` : i;
const validator = new AjvSchemaValidator();
const registry = new ToolRegistryImpl({ validator, globalMaximumOutputBytes: 1 << 20, flags: {} });
registry.registerBuiltins([{ spec: ToolSpec.parse({ name: 'demo.bench', version: '1', description: 'bench', input_schema: schema, output_schema: null, side_effect: 'none', risk: 'low', idempotency: 'read_only', required_scopes: ['demo.use'], timeout_seconds: 5, maximum_output_bytes: 4096, allow_parallel: true, output_trust: 'internal_tool' }), execute: async () => ({ ok: true, content: [] }) }]);
const deps = { registry, validator, policy: new DefaultPolicyEngine(), clock: { now: () => new Date() } };
const session = { agent: { agentId: 'bench' }, pinned: null };
const request = { tenantId: 't', principal: { tenant_id: 't', principal_id: 'p', scopes: ['demo.use'] }, sessionId: 's', runId: 'r', stepNumber: 1, callId: 'c', toolName: 'demo.bench', arguments: args, origin: 'model' as const, contextTrust: ['user' as const] };
const fa = () => after.executeToolCall(deps as never, session as never, request, { dryRun: true });
const fb = () => before.executeToolCall(deps as never, session as never, request, { dryRun: true });
if ((await fa()).kind !== 'authorized' || (await fb()).kind !== 'authorized') throw new Error('not authorized');
async function rate(fn: () => Promise<unknown>, n: number) { const c = process.cpuUsage(); for (let i = 0; i < n; i++) await fn(); const d = process.cpuUsage(c); return (n / ((d.user + d.system) / 1000)) * 1000; }
const A: number[] = [], B: number[] = [];
for (let i = 0; i < 3; i++) { await rate(fb, 20000); await rate(fa, 20000); }
for (let i = 0; i < 40; i++) { B.push(await rate(fb, 5000)); A.push(await rate(fa, 5000)); }
const med = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)]!;
console.log(`before (no instrumentation): ${Math.round(med(B))} calls/s (${Math.round(1e9 / med(B))} ns/call)`);
console.log(`after (tool.execute span, no SDK): ${Math.round(med(A))} calls/s (${Math.round(1e9 / med(A))} ns/call)`);
console.log(`after/before: ${(med(A) / med(B)).toFixed(3)}`);
