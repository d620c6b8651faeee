import { performance } from 'node:perf_hooks';
import { trace, context } from '@opentelemetry/api';
const body = async () => 1;
async function rate(name: string, fn: () => Promise<unknown>, n = 200000) { for (let i=0;i<n;i++) await fn(); const s = performance.now(); for (let i = 0; i < n; i++) await fn(); console.log(name, Math.round((performance.now() - s) * 1e6 / n), 'ns'); }
await rate('bare', () => body());
await rate('then', () => body().then((r) => r, (e) => { throw e; }));
await rate('getTracer', () => { trace.getTracer('x'); return body(); });
const t = trace.getTracer('x');
await rate('startActiveSpan(cached tracer)', () => t.startActiveSpan('a', (s) => body()));
await rate('getTracer+startActiveSpan', () => trace.getTracer('x').startActiveSpan('a', (s) => body()));
await rate('getTracer+startSpan+isRecording', () => { const s = trace.getTracer('x').startSpan('a'); s.isRecording(); return body(); });
await rate('context.active', () => { context.active(); return body(); });
