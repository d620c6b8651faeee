import { describe, expect, it } from 'vitest';
import { cpuPerOp, SceneTally, statementTablesMarkdown, topLevelMsPerOp } from '../src/statement-stats';

describe('a scene tally', () => {
  it('adds windows up by level and statement, and keeps CPU unknown once a window could not read it', () => {
    const tally = new SceneTally('s');
    tally.add({ ops: 2, cpuMs: 4, rows: [{ toplevel: true, query: 'select f()', calls: 2, execMs: 3 }] });
    tally.add({
      ops: 2,
      cpuMs: 6,
      rows: [
        { toplevel: true, query: 'select f()', calls: 2, execMs: 5 },
        { toplevel: false, query: 'select f()', calls: 1, execMs: 1 },
      ],
    });
    const cost = tally.cost();
    expect(cost.rows).toEqual([
      { toplevel: true, query: 'select f()', calls: 4, execMs: 8 },
      { toplevel: false, query: 'select f()', calls: 1, execMs: 1 },
    ]);
    expect(cpuPerOp(cost)).toBe(2.5);
    expect(topLevelMsPerOp(cost)).toBe(2);
    tally.add({ ops: 1, cpuMs: null, rows: [] });
    expect(Number.isNaN(cpuPerOp(tally.cost()))).toBe(true);
  });

  it('escapes a | in a statement in the markdown table', () => {
    const tally = new SceneTally('pipes');
    tally.add({ ops: 1, cpuMs: 1, rows: [{ toplevel: true, query: "select 'a' || 'b'", calls: 1, execMs: 1 }] });
    expect(statementTablesMarkdown([tally.cost()])).toContain("`select 'a' \\|\\| 'b'`");
  });
});
