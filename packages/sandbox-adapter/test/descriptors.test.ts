import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir } from './sandbox-fixture';

const data = makeDataDir();
afterAll(() => data.cleanup());

describe('inherited descriptors', () => {
  it('a descriptor the worker inherited without close-on-exec never reaches the program', async () => {
    const fixture = path.join(import.meta.dirname, 'fixtures', 'leaked-descriptor-child.ts');
    // fds 30 and 300 of the worker: opened by bash without close-on-exec and kept across exec,
    // as a supervisor's or a shell's would be (Node itself marks its low inherited fds
    // close-on-exec at start-up, so these are above that range).
    const child = spawn(
      '/bin/bash',
      [
        '--norc',
        '-c',
        'exec 30</dev/null 300>/dev/null; exec "$0" "$@"',
        process.execPath,
        '--import',
        'tsx',
        fixture,
        data.workspace,
        data.stateDir,
        data.workspaceRoot,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const report = JSON.parse(out) as { held: number[]; inside: number[]; ending: string };
    // The leak is real in the worker ...
    expect(report.held).toEqual(expect.arrayContaining([30, 300]));
    expect(report.ending).toBe('exited');
    // ... and the program sees 0, 1, 2 and the one descriptor its own glob opened.
    expect(report.inside.slice(0, 3)).toEqual([0, 1, 2]);
    expect(report.inside.filter((fd) => fd > 2).length).toBeLessThanOrEqual(1);
    expect(report.inside).not.toContain(30);
    expect(report.inside).not.toContain(300);
  });
});
