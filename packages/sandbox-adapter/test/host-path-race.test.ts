import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox, WorkspaceFileService } from '../src/index';
import { DECOY, race, type RaceSummary, SECRET_KEY, world } from './race-scenario';
import { LIMITS } from './sandbox-fixture';

/**
 * Issue 23, the critical class (docs/adr/0058): a program in the sandbox swaps a folder of its
 * workspace for a symbolic link, atomically and continuously (renameat2 RENAME_EXCHANGE in a
 * loop), while host-side code works on paths through that folder. Nothing outside the workspace
 * may be read, written or handed over, whichever way the race falls (test/race-scenario.ts).
 */

const ROOT = process.getuid?.() === 0;
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
});

function expectNothingEscaped(result: RaceSummary): void {
  expect(result.setup.ending, result.setup.stderr).toBe('exited');
  expect(result.setup.exitCode, result.setup.stderr).toBe(0);
  expect(result.swapEnding).toBe('exited');
  expect(result.handOvers).toBeGreaterThan(0);
  // The race really ran: thousands of swaps, thousands of host calls, and the inside was reached.
  expect(result.swaps).toBeGreaterThan(1_000);
  expect(result.calls * 5).toBeGreaterThan(1_000);
  expect(result.reads.length).toBeGreaterThan(0);
  // Nothing read from outside: every read is the workspace's own text.
  expect(result.reads.filter((text) => text.includes(DECOY) || text.includes(SECRET_KEY))).toEqual([]);
  expect(new Set(result.reads)).toEqual(new Set(['inside\n']));
  // Nothing listed from outside (the data folder holds secrets.key, decoy, workspaces).
  expect(result.lists.filter((names) => names.includes('workspaces') || names.includes('decoy'))).toEqual([]);
  // Nothing written outside, and nothing outside handed to the sandbox's user.
  expect(result.decoyEntries).toEqual(['f']);
  expect(result.dataEntries).toEqual(['decoy', 'sandbox', 'secrets.key', 'workspaces']);
  expect(result.owners).toEqual([result.uid, result.uid, result.uid, result.uid]);
}

describe('host-side workspace code against a program swapping folders for links (issue 23)', () => {
  it('the confined helper: the secrets key and a root-only folder as targets; nothing read, written or handed over', async () => {
    const result = await race('bubblewrap', false, (w) => w.decoy);
    expectNothingEscaped(result);
    const toKey = await race('bubblewrap', false, (w) => w.data);
    expectNothingEscaped(toKey);
  }, 60_000);

  it("as a non-root worker (bwrap unprivileged, the key the worker's own file): nothing read, written or handed over", async () => {
    // Run as root, the whole scenario goes to a child process as uid 65534 (a folder it can
    // read); run as a normal user, the tests already are that worker.
    let results: RaceSummary[];
    if (ROOT) {
      const { stdout, stderr, status } = spawnSync(
        'setpriv',
        ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, '--import', 'tsx', 'test/fixtures/non-root-race.ts'],
        {
          cwd: PACKAGE_DIR,
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', TMPDIR: '/tmp' },
          timeout: 60_000,
        },
      );
      expect(status, stderr).toBe(0);
      results = JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as RaceSummary[];
      for (const result of results) expect(result.uid).toBe(65534);
    } else {
      results = [await race('bubblewrap', false, (w) => w.decoy), await race('bubblewrap', false, (w) => w.data)];
    }
    expect(results).toHaveLength(2);
    for (const result of results) expectNothingEscaped(result);
  }, 90_000);

  it('the walk alone holds: targets the helper could read, helper unconfined (as a non-root worker without bubblewrap)', async () => {
    const result = await race('process', true, (w) => w.decoy);
    expectNothingEscaped(result);
    const toKey = await race('process', true, (w) => w.data);
    expectNothingEscaped(toKey);
    expect(result.writes + toKey.writes).toBeGreaterThan(0);
  }, 60_000);

  it('a link planted in advance is refused by every operation, and the answer names no host path', async () => {
    const w = world(true);
    made.push(w.data);
    const files = new WorkspaceFileService({ workspaceRoot: w.workspaces, confinement: 'process' });
    files.prepare(w.workspace);
    symlinkSync(w.data, path.join(w.workspace, 'l'));
    symlinkSync('../../..', path.join(w.workspace, 'up'));
    const handle = files.forFolder(w.workspace);
    const answers = [
      await handle.read(['l', 'secrets.key'], 100),
      await handle.read(['up', 'secrets.key'], 100),
      await handle.list(['l'], 10),
      await handle.write(['l', 'planted'], Buffer.from('x'), 'overwrite'),
      await handle.write(['up', 'planted'], Buffer.from('x'), 'overwrite'),
      await handle.stat(['l', 'secrets.key']),
    ];
    await files.close();
    for (const answer of answers) {
      expect(answer.ok).toBe(false);
      if (!answer.ok) {
        expect(answer.code).toBe('escape');
        expect(answer.detail).not.toContain(w.data);
      }
    }
    expect(existsSync(path.join(w.data, 'planted'))).toBe(false);
  });

  it("the mount table names no data-folder path but the workspace bind's own root field (a kernel field; docs/adr/0058)", async () => {
    const w = world(false);
    made.push(w.data);
    const sandbox = new BubblewrapSandbox({ stateDir: path.join(w.data, 'sandbox'), workspaceRoot: w.workspaces, dataDir: w.data });
    new WorkspaceFileService({ workspaceRoot: w.workspaces }).prepare(w.workspace);
    const result = await sandbox.run(
      { argv: ['/bin/cat', '/proc/self/mountinfo'], workspaceHostPath: w.workspace, limits: LIMITS },
      new AbortController().signal,
    );
    expect(result.exitCode, result.stderr.text).toBe(0);
    const naming = result.stdout.text.split('\n').filter((line) => line.includes(w.data));
    // passwd and group are copied in (--ro-bind-data), not bound from <data>/sandbox/etc.
    expect(result.stdout.text).not.toContain(path.join(w.data, 'sandbox'));
    expect(naming).toHaveLength(1);
    expect(naming[0]?.split(' ')[4]).toBe('/workspace');
  });
});
