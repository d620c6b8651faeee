import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The public surface of @veetbot/ports (docs/adr/0031): types only, one file per port. Type-only
// exports are invisible at run time, so the pinned list is empty: the entry exports no value.
// ARCHITECTURE.md: ports holds interfaces only. A value exported from here would be runtime
// code every adapter drags in, and a place for behaviour to hide outside the executor.
describe('@veetbot/ports public surface: interfaces only', () => {
  it('the entry point has no runtime exports', async () => {
    const mod = await import('../src/index');
    expect(Object.keys(mod)).toEqual([]);
  });

  it('every source file declares types only', () => {
    const dir = join(import.meta.dirname, '..', 'src');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      const runtime = text
        .split('\n')
        .filter((line) => /^export\s+(const|let|var|function|class|enum|default)\b/.test(line) || /^import\s+(?!type\b)/.test(line));
      expect(runtime, file).toEqual([]);
    }
  });
});
