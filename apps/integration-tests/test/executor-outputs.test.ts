import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentBytes, formatByteCount, jsonEscapedBytes, type RenderedContentPart } from '@veetbot/domain';
import type { ArtifactRow } from '@veetbot/ports';
import { concludedOf, drivers, hugeText, type PipelineHarness } from '../src';
import { eventTypes, expectSixFieldOutcome, unwrapEnvelope, usePipelineHarness } from './pipeline-suite';

/**
 * § Output: limits, truncation, and artifacts, over the real blob store and artifact rows.
 * demo.huge_output declares maximum_output_bytes 8,192 and output_trust USER, and returns
 * exactly `bytes` bytes of ASCII; content size is the UTF-8 JSON of the content array
 * (27 bytes of framing around one text part).
 */
const MAXIMUM_OUTPUT_BYTES = 8192;
const FRAMING = contentBytes([{ type: 'text', text: '' }]);

function textOf(part: RenderedContentPart | undefined): string {
  if (part === undefined || part.type !== 'text') throw new Error('expected a text part');
  return part.text;
}

describe.each(drivers())('executor outputs (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  describe('under the inline ceiling: inline', () => {
    it('a USER-trust result is inline and unframed, up to exactly the ceiling', async () => {
      const h = scene();
      const bytes = 4096 - FRAMING;
      const request = h.call('demo.huge_output', { bytes });
      const result = concludedOf(await h.execute(request));
      expect(result.invocationStatus).toBe('succeeded');
      expect(result.item.content).toEqual([{ type: 'text', text: hugeText(bytes), trust: 'user' }]);
      expect(result.item).toMatchObject({ trust: 'user', truncated: false, artifact_id: null });
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({ outputBytes: 4096, truncated: false, artifactId: null });
      expect(await h.stores.artifacts.listForRun(h.tenantId, h.runId)).toEqual([]);
    });

    it.each(['internal_tool', 'external_untrusted'] as const)(
      'a result below USER (%s) is enveloped with its source and trust',
      async (trust) => {
        const h = scene();
        const result = concludedOf(await h.execute(h.call('demo.huge_output', { bytes: 64, output_trust: trust })));
        expect(result.item.trust).toBe(trust);
        expect(result.item.content).toHaveLength(1);
        const part = result.item.content[0]!;
        expect(part).toMatchObject({ type: 'text', trust });
        expect(unwrapEnvelope(textOf(part))).toMatchObject({ source: 'demo.huge_output', trust, body: hugeText(64) });
      },
    );

    it('output_trust above the declared trust is clamped to the declared one', async () => {
      const h = scene();
      const result = concludedOf(await h.execute(h.call('demo.huge_output', { bytes: 32, output_trust: 'platform' })));
      expect(result.item.trust).toBe('user');
      expect(result.item.content).toEqual([{ type: 'text', text: hugeText(32), trust: 'user' }]);
    });
  });

  describe('above min(maximum_output_bytes, inline limit): artifact and excerpt', () => {
    async function artifactized(h: PipelineHarness, args: Record<string, unknown>, inlineMaximumBytes: number) {
      const worker = inlineMaximumBytes === 4096 ? h.worker : await h.newWorker('worker-a', { inlineMaximumBytes });
      const request = h.call('demo.huge_output', args);
      // Observe step 13 as it begins: the artifact must already exist, the row not yet be terminal.
      let atPersist: { artifacts: ArtifactRow[]; status: string } | null = null;
      h.onStep = async (step) => {
        if (step !== 13) return;
        const started = h.probe('demo.huge_output').last();
        atPersist = {
          artifacts: await h.stores.artifacts.listForRun(h.tenantId, h.runId),
          status: (await h.invocation(started.context.invocationId)).status,
        };
      };
      const result = concludedOf(await worker.execute(request));
      h.onStep = null;
      const row = await h.invocationOfCall(request.callId);
      return { result, row, atPersist: atPersist as { artifacts: ArtifactRow[]; status: string } | null };
    }

    it.each([4096, 1024])(
      'inline limit %i: the whole result is written to an artifact before the row is persisted',
      async (inlineMaximumBytes) => {
        const h = scene();
        const bytes = 20_000;
        const text = hugeText(bytes);
        const { result, row, atPersist } = await artifactized(h, { bytes }, inlineMaximumBytes);
        const budget = Math.min(MAXIMUM_OUTPUT_BYTES, inlineMaximumBytes);

        expect(result.invocationStatus).toBe('succeeded');
        // Written BEFORE step 13: the artifact row existed while the invocation was still RUNNING.
        expect(atPersist).not.toBeNull();
        expect(atPersist!.status).toBe('running');
        expect(atPersist!.artifacts.map((a) => a.id)).toEqual([row.artifactId]);

        // The row: truncated, output_bytes of the whole content, the artifact id.
        expect(row).toMatchObject({ status: 'succeeded', truncated: true, outputBytes: bytes + FRAMING });
        expect(row.artifactId).not.toBeNull();
        expect(result.item).toMatchObject({ truncated: true, artifact_id: row.artifactId, trust: 'user' });

        // The artifact holds the full content, tenant-scoped, with the result's trust.
        const artifact = await h.stores.artifacts.get(h.tenantId, row.artifactId!);
        expect(artifact).toMatchObject({
          runId: h.runId,
          invocationId: row.id,
          bytes,
          trust: 'user',
          sha256: createHash('sha256').update(text).digest('hex'),
        });
        const blob = await h.blobs.get(h.tenantId, row.artifactId!);
        expect(Buffer.from(blob!).toString('utf8')).toBe(text);

        // The excerpt: head ≤ 60%, tail ≤ 20% of the budget, the exact marker between them.
        const [head, marker, tail] = result.item.content.map(textOf);
        expect(result.item.content.map((p) => (p.type === 'text' ? p.trust : 'artifact'))).toEqual(['user', 'platform', 'user']);
        expect(text.startsWith(head!)).toBe(true);
        expect(text.endsWith(tail!)).toBe(true);
        expect(jsonEscapedBytes(head!)).toBeLessThanOrEqual(Math.floor(budget * 0.6));
        expect(jsonEscapedBytes(tail!)).toBeLessThanOrEqual(Math.floor(budget * 0.2));
        expect(head!.length).toBeGreaterThan(Math.floor(budget * 0.6) - 100);
        expect(tail!.length).toBeGreaterThan(Math.floor(budget * 0.2) - 100);
        const elided = bytes - head!.length - tail!.length;
        expect(marker).toBe(`[... ${formatByteCount(elided)} bytes elided; full output: artifact:${row.artifactId} ...]`);
        expect(jsonEscapedBytes(head!) + jsonEscapedBytes(marker!) + jsonEscapedBytes(tail!)).toBeLessThanOrEqual(budget);
      },
    );

    it('one byte over the ceiling is artifactized', async () => {
      const h = scene();
      const { result, row } = await artifactized(h, { bytes: 4096 - FRAMING + 1 }, 4096);
      expect(row).toMatchObject({ truncated: true, outputBytes: 4097 });
      expect(result.item.artifact_id).toBe(row.artifactId);
    });

    it('below USER, head and tail are each a closed envelope and the marker sits outside both', async () => {
      const h = scene();
      const { result, row } = await artifactized(h, { bytes: 20_000, output_trust: 'external_untrusted' }, 4096);
      expect(result.item.trust).toBe('external_untrusted');
      const [head, marker, tail] = result.item.content.map(textOf);
      const headEnvelope = unwrapEnvelope(head!);
      const tailEnvelope = unwrapEnvelope(tail!);
      expect(headEnvelope).toMatchObject({ source: 'demo.huge_output', trust: 'external_untrusted' });
      expect(tailEnvelope).toMatchObject({ source: 'demo.huge_output', trust: 'external_untrusted' });
      expect(headEnvelope!.nonce).not.toBe(tailEnvelope!.nonce);
      expect(jsonEscapedBytes(headEnvelope!.body)).toBeLessThanOrEqual(Math.floor(4096 * 0.6));
      expect(jsonEscapedBytes(tailEnvelope!.body)).toBeLessThanOrEqual(Math.floor(4096 * 0.2));
      expect(unwrapEnvelope(marker!)).toBeNull();
      expect(marker).toContain(`artifact:${row.artifactId}`);
      expect((await h.stores.artifacts.get(h.tenantId, row.artifactId!))?.trust).toBe('external_untrusted');
    });

    it('a raised output_trust is clamped for the artifact too', async () => {
      const h = scene();
      const { result, row } = await artifactized(h, { bytes: 10_000, output_trust: 'platform' }, 4096);
      expect(result.item.trust).toBe('user');
      expect((await h.stores.artifacts.get(h.tenantId, row.artifactId!))?.trust).toBe('user');
    });
  });

  it('above 4 × maximum_output_bytes: FAILED tool.output_too_large, the capture (exactly 4×) still artifactized', async () => {
    const h = scene();
    const bytes = 40_000;
    const request = h.call('demo.huge_output', { bytes });
    const result = concludedOf(await h.execute(request));
    expect(result.invocationStatus).toBe('failed');
    expectSixFieldOutcome(result.item, 'tool.output_too_large');
    expect(result.item.structured).toBeNull();
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'failed', reasonCode: 'tool.output_too_large', truncated: true, outputBytes: bytes + FRAMING });
    expect(row.artifactId).not.toBeNull();
    const artifact = await h.stores.artifacts.get(h.tenantId, row.artifactId!);
    expect(artifact?.bytes).toBe(4 * MAXIMUM_OUTPUT_BYTES);
    const blob = await h.blobs.get(h.tenantId, row.artifactId!);
    expect(Buffer.from(blob!).toString('utf8')).toBe(hugeText(bytes).slice(0, 4 * MAXIMUM_OUTPUT_BYTES));
    expect(eventTypes(await h.eventsOf(row.id)).at(-1)).toBe('tool.call.failed');
  });

  it('a result that breaks its output_schema is FAILED tool.output_invalid and still recorded as executed', async () => {
    const h = scene();
    const request = h.call('demo.schema_output', { valid: false });
    const result = concludedOf(await h.execute(request));
    expect(result.invocationStatus).toBe('failed');
    expectSixFieldOutcome(result.item, 'tool.output_invalid');
    expect(result.item.structured).toBeNull();
    expect(h.probe('demo.schema_output').executions).toBe(1);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'failed', reasonCode: 'tool.output_invalid', attemptNumber: 1 });
    // Executed: it was claimed and started, and the watermark (workspace_write) is kept.
    expect(row.startedAt).not.toBeNull();
    expect(row.effectSentAt).not.toBeNull();
    const events = await h.eventsOf(row.id);
    expect(eventTypes(events)).toEqual(['tool.call.proposed', 'tool.call.authorized', 'tool.call.started', 'tool.call.failed']);
    expect(events.at(-1)?.payload).toMatchObject({ reason_code: 'tool.output_invalid', effect_sent: true });
  });

  it('a valid structured result passes the same output_schema', async () => {
    const h = scene();
    const result = concludedOf(await h.execute(h.call('demo.schema_output', { valid: true })));
    expect(result.invocationStatus).toBe('succeeded');
    expect(result.item.structured).toEqual({ count: 1 });
  });

  it('a malformed ToolResult is FAILED tool.output_invalid', async () => {
    const h = scene();
    const request = h.call('demo.bad_result', {});
    const result = concludedOf(await h.execute(request));
    expectSixFieldOutcome(result.item, 'tool.output_invalid');
    expect(result.item.content).toEqual([]);
    expect((await h.invocationOfCall(request.callId)).startedAt).not.toBeNull();
  });
});
