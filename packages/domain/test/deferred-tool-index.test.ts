import { describe, expect, it } from 'vitest';
import { deferredToolEntry, deferredToolIndex, DEFERRED_ENTRY_MAXIMUM_CHARACTERS } from '../src/deferred-tool-index';
import { ToolSpec } from '../src/tool-spec';

const spec = (name: string, description: string) =>
  ToolSpec.parse({
    name,
    version: '1',
    description,
    input_schema: { type: 'object' },
    output_schema: null,
    side_effect: 'none',
    risk: 'low',
    idempotency: 'read_only',
    required_scopes: [],
    timeout_seconds: 5,
    maximum_output_bytes: 1024,
    allow_parallel: true,
    output_trust: 'internal_tool',
  });

describe('the deferred tool index: one line per tool (§ Control tools, tool.call)', () => {
  it('keeps the first line of the description, trimmed', () => {
    expect(deferredToolEntry(spec('demo.a', '  Reads a thing.  \nSecond line with detail.\r\nThird.'))).toEqual({
      name: 'demo.a',
      description: 'Reads a thing.',
    });
    expect(deferredToolEntry(spec('demo.b', 'One\r\nTwo')).description).toBe('One');
  });

  it('cuts a long first line at 200 characters without splitting a surrogate pair', () => {
    const long = '😀'.repeat(300);
    const entry = deferredToolEntry(spec('demo.c', long));
    const points = Array.from(entry.description);
    expect(points).toHaveLength(DEFERRED_ENTRY_MAXIMUM_CHARACTERS);
    expect(points.at(-1)).toBe('…');
    // No lone surrogate: every code point of the cut line is a whole emoji (or the marker).
    expect(points.slice(0, -1).every((p) => p === '😀')).toBe(true);
    const exact = 'x'.repeat(DEFERRED_ENTRY_MAXIMUM_CHARACTERS);
    expect(deferredToolEntry(spec('demo.d', exact)).description).toBe(exact);
  });

  it('lists the deferred names in stored order, from the pinned specs, skipping a name without one', () => {
    const pinned = [spec('demo.a', 'A.'), spec('demo.b', 'B.')];
    expect(deferredToolIndex(['demo.b', 'demo.gone', 'demo.a'], pinned)).toEqual([
      { name: 'demo.b', description: 'B.' },
      { name: 'demo.a', description: 'A.' },
    ]);
  });
});
