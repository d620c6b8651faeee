import { describe, expect, it } from 'vitest';
import { functionFiles } from '../src/sql-functions';

// docs/adr/0074: veetbot_insert_intent, veetbot_claim and veetbot_complete each carry the same
// inline event append (one statement instead of two nested function calls). Three copies must
// not drift apart: each is the same text, indentation aside, and defers to the general
// functions for what it does not do itself.
const HOT = ['veetbot_insert_intent', 'veetbot_claim', 'veetbot_complete'] as const;
const START = "-- The call's events (docs/adr/0074)";

function inlineAppend(text: string): string {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.trim().startsWith(START));
  if (first < 0) return '';
  const indent = (lines[first] ?? '').length - (lines[first] ?? '').trimStart().length;
  // The block ends with the END IF at its own indentation.
  const last = lines.findIndex((line, i) => i > first && line === `${' '.repeat(indent)}END IF;`);
  return lines
    .slice(first, last + 1)
    .map((line) => line.slice(indent))
    .join('\n');
}

describe('the inline event append of the hot functions', () => {
  const files = functionFiles();
  const blocks = HOT.map((name) => inlineAppend(files.get(name)?.text ?? ''));

  it('is in each hot function, the same text in all three', () => {
    for (const block of blocks) expect(block).toContain('INSERT INTO events');
    expect(new Set(blocks).size).toBe(1);
  });

  it('numbers from the locked counter and hands the rare cases to the general functions', () => {
    const block = blocks[0] ?? '';
    expect(block).toContain('UPDATE event_streams SET last_sequence = last_sequence + jsonb_array_length(p_events)');
    expect(block).toContain('ON CONFLICT (tenant_id, derivation_key) DO NOTHING');
    expect(block).toContain('PERFORM veetbot_append_events(p_tenant, p_events);');
    expect(block).toContain('PERFORM veetbot_append_stream_events(p_tenant, p_stream, p_events);');
    expect(block).toContain('PERFORM veetbot_close_event_gaps(p_tenant, p_stream, v_base);');
    // The general function's own insert is the same statement shape: same columns, same values.
    const general = files.get('veetbot_append_stream_events')?.text ?? '';
    expect(general).toContain('INSERT INTO events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)');
    expect(block).toContain('INSERT INTO events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)');
  });
});
