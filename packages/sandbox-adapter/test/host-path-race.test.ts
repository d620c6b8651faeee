import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox, WorkspaceFileService, type WorkspaceHelperConfinement } from '../src/index';
import { LIMITS } from './sandbox-fixture';

/**
 * Issue 23, the critical class (docs/adr/0058): a program in the sandbox swaps a folder of its
 * workspace for a symbolic link, atomically and continuously (renameat2 RENAME_EXCHANGE in a
 * loop), while host-side code works on paths through that folder. Nothing outside the workspace
 * may be read, written or handed over, whichever way the race falls.
 *
 * The swapper is perl (Debian's essential perl-base, under /usr, so the sandbox has it): Node
 * has no renameat2, and no compiler is needed.
 */

const ROOT = process.getuid?.() === 0;
const SECRET_KEY = 'THE-DATA-FOLDERS-SECRETS-KEY';
const DECOY = 'A-ROOT-ONLY-HOST-FILE';
/** Seconds the swapper runs; the host keeps calling until it is done. */
const SWAP_SECONDS = 3;

const SWAPPER = `
use Config;
my $nr = ($Config{archname} =~ /aarch64/) ? 276 : 316;   # renameat2
my $end = time + ${SWAP_SECONDS};
my ($n, $from, $to) = (0, "d", "l");   # syscall() passes strings as writable buffers
while (time < $end) { syscall($nr, -100, $from, -100, $to, 2) == 0 and $n++; }   # RENAME_EXCHANGE
print "$n\\n";
`;

interface World {
  readonly data: string;
  readonly workspaces: string;
  readonly workspace: string;
  readonly decoy: string;
  readonly key: string;
}

const worlds: string[] = [];
afterAll(() => {
  for (const folder of worlds) rmSync(folder, { recursive: true, force: true });
});

/**
 * A data folder as the worker has it: `secrets.key` (0600) and a root-only `decoy/` beside
 * `workspaces/`. `readableTargets`: the decoy and the key are made readable by the helper's user,
 * so only the walk stands between the race and them (as for a non-root worker without bubblewrap).
 */
function world(readableTargets: boolean): World {
  const data = mkdtempSync(path.join(tmpdir(), 'veetbot-race-'));
  worlds.push(data);
  const workspaces = path.join(data, 'workspaces');
  const workspace = path.join(workspaces, 'cd'.repeat(16), randomUUID());
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  const key = path.join(data, 'secrets.key');
  writeFileSync(key, SECRET_KEY, { mode: readableTargets ? 0o644 : 0o600 });
  const decoy = path.join(data, 'decoy');
  mkdirSync(decoy, { mode: readableTargets ? 0o777 : 0o700 });
  writeFileSync(path.join(decoy, 'f'), DECOY, { mode: readableTargets ? 0o666 : 0o600 });
  chmodSync(data, readableTargets ? 0o755 : 0o700);
  return { data, workspaces, workspace, decoy, key };
}

async function race(
  confinement: WorkspaceHelperConfinement,
  readableTargets: boolean,
  linkTarget: (w: World) => string,
): Promise<{ w: World; swaps: number; reads: string[]; writes: number; lists: string[][]; calls: number }> {
  const w = world(readableTargets);
  const files = new WorkspaceFileService({ workspaceRoot: w.workspaces, confinement });
  const sandbox = new BubblewrapSandbox({
    stateDir: path.join(w.data, 'sandbox'),
    workspaceRoot: w.workspaces,
    dataDir: w.data,
    workspaceFiles: files,
  });
  files.prepare(w.workspace);
  const handle = files.forFolder(w.workspace);
  // The workspace as a program leaves it: `d/` holds `f` and `secrets.key`, `l` is a link out.
  const setup = await sandbox.run(
    {
      argv: ['/bin/sh', '-c', `mkdir d && echo inside > d/f && echo inside > d/secrets.key && ln -s '${linkTarget(w)}' l`],
      workspaceHostPath: w.workspace,
      limits: LIMITS,
    },
    new AbortController().signal,
  );
  expect(setup.ending, setup.stderr.text).toBe('exited');
  expect(setup.exitCode, setup.stderr.text).toBe(0);

  const swapping = sandbox.run(
    { argv: ['/usr/bin/perl', '-e', SWAPPER], workspaceHostPath: w.workspace, limits: { ...LIMITS, wallSeconds: SWAP_SECONDS + 10 } },
    new AbortController().signal,
  );
  let done = false;
  void swapping.finally(() => {
    done = true;
  });
  const reads: string[] = [];
  const lists: string[][] = [];
  let writes = 0;
  let calls = 0;
  let handOvers = 0;
  while (!done) {
    calls += 1;
    const [f, key, listed, written] = await Promise.all([
      handle.read(['d', 'f'], 4096),
      handle.read(['d', 'secrets.key'], 4096),
      handle.list(['d'], 100),
      handle.write(['d', `new-${calls}`], Buffer.from('written'), 'create'),
      handle.stat(['d', 'f']),
    ]);
    for (const answer of [f, key]) if (answer.ok) reads.push(Buffer.from(answer.value.bytes).toString('utf8'));
    if (listed.ok) lists.push(listed.value.entries.map((entry) => entry.name));
    if (written.ok) writes += 1;
    // The hand-over a step's sandbox run makes, in the middle of the swapping.
    if (calls % 50 === 0) {
      files.prepare(w.workspace);
      handOvers += 1;
    }
  }
  const swapped = await swapping;
  await files.close();
  expect(swapped.ending, swapped.stderr.text).toBe('exited');
  expect(handOvers, `${swapped.stdout.text} ${swapped.stderr.text}`).toBeGreaterThan(0);
  return { w, swaps: Number(swapped.stdout.text.trim()), reads, writes, lists, calls };
}

function expectNothingEscaped(result: Awaited<ReturnType<typeof race>>): void {
  const { w, swaps, reads, lists, calls } = result;
  // The race really ran: thousands of swaps, thousands of host calls, and the inside was reached.
  expect(swaps).toBeGreaterThan(1_000);
  expect(calls * 5).toBeGreaterThan(1_000);
  expect(reads.length).toBeGreaterThan(0);
  // Nothing read from outside: every read is the workspace's own text.
  expect(reads.filter((text) => text.includes(DECOY) || text.includes(SECRET_KEY))).toEqual([]);
  expect(new Set(reads)).toEqual(new Set(['inside\n']));
  // Nothing listed from outside (the data folder holds secrets.key, decoy, workspaces).
  expect(lists.filter((names) => names.includes('workspaces') || names.includes('decoy'))).toEqual([]);
  // Nothing written outside, and nothing outside handed to the sandbox's user.
  expect(readdirSync(w.decoy)).toEqual(['f']);
  expect(readdirSync(w.data).sort()).toEqual(['decoy', 'sandbox', 'secrets.key', 'workspaces']);
  for (const file of [w.decoy, path.join(w.decoy, 'f'), w.key, w.data]) {
    expect(lstatSync(file).uid, file).toBe(process.getuid?.());
  }
}

describe('host-side workspace code against a program swapping folders for links (issue 23)', () => {
  it.runIf(ROOT)(
    'the confined helper: the secrets key and a root-only folder as targets; nothing read, written or handed over',
    async () => {
      const result = await race('bubblewrap', false, (w) => w.decoy);
      expectNothingEscaped(result);
      const toKey = await race('bubblewrap', false, (w) => w.data);
      expectNothingEscaped(toKey);
    },
    60_000,
  );

  it('the walk alone holds: targets the helper could read, helper unconfined (as a non-root worker without bubblewrap)', async () => {
    const result = await race('process', true, (w) => w.decoy);
    expectNothingEscaped(result);
    const toKey = await race('process', true, (w) => w.data);
    expectNothingEscaped(toKey);
    expect(result.writes + toKey.writes).toBeGreaterThan(0);
  }, 60_000);

  it('a link planted in advance is refused by every operation, and the answer names no host path', async () => {
    const w = world(true);
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
