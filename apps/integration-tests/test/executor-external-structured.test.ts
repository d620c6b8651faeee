import { describe, expect, it } from 'vitest';
import { concludedOf, drivers, HOSTILE } from '../src';
import { unwrapEnvelope, usePipelineHarness } from './pipeline-suite';

/**
 * § What the model reads: external data reaches the model only inside an EXTERNAL_UNTRUSTED
 * envelope. Structured data from an external source is never a bare `structured` field: it is
 * rendered as one enveloped JSON text part, or dropped when the content already mirrors it.
 */
describe.each(drivers())('external structured data (%s)', (driver) => {
  const h = usePipelineHarness(driver);

  it('structured-only external data is one enveloped JSON part, never a bare field', async () => {
    const { item } = concludedOf(await h().execute(h().call('demo.hostile_failure', { mode: 'structured' })));
    expect(item.outcome.status).toBe('succeeded');
    expect(item.structured).toBeNull();
    const carrying = item.content.filter((part) => part.type === 'text' && part.text.includes(HOSTILE));
    expect(carrying).toHaveLength(1);
    const part = carrying[0]!;
    if (part.type !== 'text') throw new Error('not text');
    const framed = unwrapEnvelope(part.text);
    expect(framed).toMatchObject({ source: 'demo.hostile_failure', trust: 'external_untrusted' });
    expect(JSON.parse(framed!.body)).toEqual({ note: HOSTILE });
  });

  it('structured data mirrored by a text block is not repeated', async () => {
    const { item } = concludedOf(await h().execute(h().call('demo.hostile_failure', { mode: 'structured_mirrored' })));
    expect(item.structured).toBeNull();
    expect(item.content).toHaveLength(1);
    const part = item.content[0]!;
    if (part.type !== 'text') throw new Error('not text');
    expect(unwrapEnvelope(part.text)).toMatchObject({ trust: 'external_untrusted' });
  });
});
