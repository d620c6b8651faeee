import { describe, expect, it } from 'vitest';
import { machineFacts, renderBenchmarksDoc } from '../src/benchmarks-doc';

describe('docs/benchmarks.md', () => {
  it("records the machine, the date, Node, the command and every suite's lines verbatim", () => {
    const machine = machineFacts();
    const text = renderBenchmarksDoc({
      startedAt: new Date('2030-01-01T12:00:00.000Z'),
      seconds: 123.4,
      command: 'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test pnpm bench',
      machine,
      postgres: '15.20',
      loadAtStart: '1.00, 1.00, 1.00',
      loadAtEnd: '2.00, 2.00, 2.00',
      suites: [
        {
          name: 'governed durable call vs commit floor (PostgreSQL)',
          lines: ['sequential ratio governed time / floor time: 3.79× (target ≤ 1.25×: NOT met)'],
        },
      ],
    });
    expect(text).toContain('| date | 2030-01-01T12:00:00.000Z |');
    expect(text).toContain('| command | `DATABASE_URL=postgres://postgres@127.0.0.1:5432/test pnpm bench` |');
    expect(text).toContain(`| machine | ${machine.cpu} × ${machine.cores} cores, ${machine.memory} memory`);
    expect(text).toContain(`| Node | ${process.version} |`);
    expect(text).toContain(
      '## governed durable call vs commit floor (PostgreSQL)\n\n```\nsequential ratio governed time / floor time: 3.79× (target ≤ 1.25×: NOT met)\n```',
    );
    expect(machine.cores).toBeGreaterThan(0);
    expect(machine.memory).toMatch(/^\d+\.\d GiB$/);
    expect(text).not.toContain('Taken under load');
  });

  it('says the figures were taken under load when the load average exceeded the cores', () => {
    const machine = { ...machineFacts(), cores: 2 };
    const base = {
      startedAt: new Date(),
      seconds: 1,
      command: 'pnpm bench',
      machine,
      postgres: '15',
      loadAtEnd: '0.00, 0.00, 0.00',
      suites: [],
    };
    expect(renderBenchmarksDoc({ ...base, loadAtStart: '23.07, 19.94, 15.70' })).toContain(
      '**Taken under load**: the 1-minute load average was 23.07 on 2 cores',
    );
    expect(renderBenchmarksDoc({ ...base, loadAtStart: '1.50, 1.00, 1.00' })).not.toContain('Taken under load');
  });
});

describe('where the time goes', () => {
  it('is recorded after the suites, verbatim', () => {
    const text = renderBenchmarksDoc({
      startedAt: new Date('2030-01-01T12:00:00.000Z'),
      seconds: 1,
      command: 'pnpm bench --record',
      machine: machineFacts(),
      postgres: '15',
      loadAtStart: '0.00, 0.00, 0.00',
      loadAtEnd: '0.00, 0.00, 0.00',
      suites: [{ name: 'a suite', lines: ['target step-vs-call: 1.20× (goal ≤ 1.50×): met'] }],
      analysis: '## Where the time goes\n\n| benchmark | where |\n|---|---|\n| a | b |\n',
    });
    expect(text.indexOf('## a suite')).toBeLessThan(text.indexOf('## Where the time goes'));
    expect(text).toContain('| a | b |');
    expect(text.split('\n').filter((l) => l.startsWith('target '))).toHaveLength(1);
  });
});
