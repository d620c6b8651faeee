import { describe, expect, it } from 'vitest';
import { ExpositionError, parseExposition } from './prometheus-text';

// The test parser is the instrument every metrics assertion reads through: it must refuse what
// the format refuses, or a broken exposition would pass.
describe('the strict exposition parser', () => {
  const histogram = (lines: string[]) => `# TYPE h histogram\n${lines.join('\n')}\n`;

  it('reads counters with escaped label values and histograms per label set', () => {
    const families = parseExposition(
      [
        '# HELP c A counter.',
        '# TYPE c counter',
        'c{a="x\\"y\\\\z\\n"} 3',
        'c{a="w"} 1 1700000000000',
        '# TYPE h histogram',
        'h_bucket{le="1",k="p"} 1',
        'h_bucket{le="+Inf",k="p"} 2',
        'h_sum{k="p"} 3.5',
        'h_count{k="p"} 2',
        '',
      ].join('\n'),
    );
    expect(families.map((f) => [f.name, f.type])).toEqual([
      ['c', 'counter'],
      ['h', 'histogram'],
    ]);
    expect(families[0]?.samples[0]?.labels).toEqual({ a: 'x"y\\z\n' });
    expect(families[1]?.histograms).toEqual([
      {
        labels: { k: 'p' },
        buckets: new Map([
          ['1', 1],
          ['+Inf', 2],
        ]),
        sum: 3.5,
        count: 2,
      },
    ]);
  });

  it.each([
    ['an unquoted label value', '# TYPE c counter\nc{a=x} 1\n'],
    ['an unknown escape', '# TYPE c counter\nc{a="\\t"} 1\n'],
    ['a bad value', '# TYPE c counter\nc 1,5\n'],
    ['a bad metric name', '# TYPE c counter\n9c 1\n'],
    ['a duplicate series', '# TYPE c counter\nc{a="1"} 1\nc{a="1"} 2\n'],
    ['a non-contiguous family', '# TYPE c counter\nc 1\n# TYPE d counter\nd 1\nc{x="1"} 1\n'],
    ['TYPE after samples', 'c 1\n# TYPE c counter\n'],
    ['a histogram sample without a suffix', histogram(['h 1'])],
    ['a histogram _bucket without le', histogram(['h_bucket 1', 'h_sum 1', 'h_count 1'])],
    ['no +Inf bucket', histogram(['h_bucket{le="1"} 1', 'h_sum 1', 'h_count 1'])],
    ['+Inf bucket not equal to _count', histogram(['h_bucket{le="+Inf"} 1', 'h_sum 1', 'h_count 2'])],
    ['non-cumulative buckets', histogram(['h_bucket{le="1"} 2', 'h_bucket{le="+Inf"} 1', 'h_sum 1', 'h_count 1'])],
    ['a missing _sum', histogram(['h_bucket{le="+Inf"} 1', 'h_count 1'])],
    ['no trailing newline', '# TYPE c counter\nc 1'],
  ])('refuses %s', (_, text) => {
    expect(() => parseExposition(text)).toThrow(ExpositionError);
  });
});
