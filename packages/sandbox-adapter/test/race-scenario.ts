import { randomUUID } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BubblewrapSandbox, WorkspaceFileService, type WorkspaceHelperConfinement } from '../src/index';
import { LIMITS } from './sandbox-fixture';

/**
 * The race of issue 23 (docs/adr/0058), as plain code: used by host-path-race.test.ts in the
 * test process, and by fixtures/non-root-race.ts as an unprivileged user. A program in the
 * sandbox swaps `d` (a real folder) and `l` (a link out of the workspace) with renameat2
 * RENAME_EXCHANGE in a loop while the host reads, lists, writes, stats and hands over. The
 * swapper is perl (Debian's essential perl-base, under /usr): Node has no renameat2.
 */

export const SECRET_KEY = 'THE-DATA-FOLDERS-SECRETS-KEY';
export const DECOY = 'A-ROOT-ONLY-HOST-FILE';
/** The host's calls (five operations each) before it tells the swapper to stop. */
const HOST_CALLS = 300;
/** The swapper's own bound, should the host never say stop. */
const SWAP_SECONDS = 30;

const SWAPPER = `
use Config;
my $nr = ($Config{archname} =~ /aarch64/) ? 276 : 316;   # renameat2
my $end = time + ${SWAP_SECONDS};
my ($n, $from, $to) = (0, "d", "l");   # syscall() passes strings as writable buffers
while (time < $end && !-e "stop") { syscall($nr, -100, $from, -100, $to, 2) == 0 and $n++; }   # RENAME_EXCHANGE
print "$n\\n";
`;

export interface World {
  readonly data: string;
  readonly workspaces: string;
  readonly workspace: string;
  readonly decoy: string;
  readonly key: string;
}

/**
 * A data folder as the worker has it: `secrets.key` (0600) and a private `decoy/` beside
 * `workspaces/`. `readableTargets`: the decoy and the key are made readable by the helper's user,
 * so only the walk stands between the race and them (as for a non-root worker without bubblewrap).
 */
export function world(readableTargets: boolean): World {
  const data = mkdtempSync(path.join(tmpdir(), 'veetbot-race-'));
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

/** What a race left: plain data, so an unprivileged child process can report it as JSON. */
export interface RaceSummary {
  readonly setup: { readonly ending: string; readonly exitCode: number | null; readonly stderr: string };
  readonly swapEnding: string;
  readonly swaps: number;
  readonly calls: number;
  readonly handOvers: number;
  readonly writes: number;
  readonly reads: string[];
  readonly lists: string[][];
  readonly decoyEntries: string[];
  readonly dataEntries: string[];
  /** Owner uid of the decoy, its file, the key and the data folder, after the race. */
  readonly owners: number[];
  readonly uid: number;
}

export async function race(
  confinement: WorkspaceHelperConfinement,
  readableTargets: boolean,
  linkTarget: (w: World) => string,
): Promise<RaceSummary> {
  const w = world(readableTargets);
  try {
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
      // Enough calls made under the swapping (however loaded the machine): tell it to stop.
      if (calls === HOST_CALLS) await handle.write(['stop'], Buffer.from('stop'), 'overwrite');
    }
    const swapped = await swapping;
    await files.close();
    return {
      setup: { ending: setup.ending, exitCode: setup.exitCode, stderr: setup.stderr.text },
      swapEnding: swapped.ending,
      swaps: Number(swapped.stdout.text.trim()),
      calls,
      handOvers,
      writes,
      reads,
      lists,
      decoyEntries: readdirSync(w.decoy),
      dataEntries: readdirSync(w.data).sort(),
      owners: [w.decoy, path.join(w.decoy, 'f'), w.key, w.data].map((file) => lstatSync(file).uid),
      uid: process.getuid?.() ?? -1,
    };
  } finally {
    rmSync(w.data, { recursive: true, force: true });
  }
}
