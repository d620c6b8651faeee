import type { Reconciler, Reconcilers } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { composeReconcilers } from '../src/compose-reconcilers';

function set(names: readonly string[], tag: string): Reconcilers {
  const of = (name: string): Reconciler => ({ name: `${tag}:${name}`, reconcile: async () => ({ outcome: 'unknown', evidence: tag }) });
  return { forTool: (name) => (names.includes(name) ? of(name) : null), toolNames: () => names };
}

describe('composeReconcilers (docs/adr/0066)', () => {
  it('asks each set in order, the first that answers wins; the names are the union, once each; absent sets are skipped', () => {
    const composed = composeReconcilers(
      undefined,
      set(['mcp.t.create', 'shared'], 'mcp'),
      set(['demo.external_write', 'shared'], 'builtin'),
    );
    expect(composed.forTool('mcp.t.create', 'v')?.name).toBe('mcp:mcp.t.create');
    expect(composed.forTool('demo.external_write', 'v')?.name).toBe('builtin:demo.external_write');
    expect(composed.forTool('shared', 'v')?.name).toBe('mcp:shared');
    expect(composed.forTool('mcp.other.x', 'v')).toBeNull();
    expect([...composed.toolNames()].sort()).toEqual(['demo.external_write', 'mcp.t.create', 'shared']);
    expect(composeReconcilers().toolNames()).toEqual([]);
  });
});
