// Runs the real dependency-cruiser binary with the real root configuration, from a tree's root,
// exactly as `pnpm boundaries` does from the repository's root. One cruise per tree: its JSON
// result gives the violations; depcruise-fmt then renders that result with the `err` reporter
// `pnpm boundaries` prints, whose exit code is the gate's (the JSON reporter always exits 0).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './boundary-modules';

export interface Violation {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

export interface CruiseOutcome {
  /** The exit code of the gate's `err` report of this cruise. */
  exitCode: number;
  /** The `err` report itself, as `pnpm boundaries` prints it. */
  report: string;
  violations: Violation[];
  errorCount: number;
  modules: string[];
}

const BIN = join(REPO_ROOT, 'node_modules', '.bin');
const CONFIG = join(REPO_ROOT, '.dependency-cruiser.cjs');

function run(command: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

export async function cruise(treeRoot: string): Promise<CruiseOutcome> {
  const scratch = mkdtempSync(join(tmpdir(), 'veetbot-boundaries-'));
  const resultFile = join(scratch, 'result.json');
  try {
    const cruised = await run(
      join(BIN, 'depcruise'),
      ['--config', CONFIG, '--output-type', 'json', '--output-to', resultFile, 'packages', 'apps', 'tooling'],
      treeRoot,
    );
    if (cruised.code !== 0) throw new Error(`depcruise failed (exit ${cruised.code}): ${cruised.stderr}`);
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as {
      summary: { violations: Violation[]; error: number };
      modules: { source: string }[];
    };
    const formatted = await run(join(BIN, 'depcruise-fmt'), ['--output-type', 'err', '--exit-code', resultFile], treeRoot);
    return {
      exitCode: formatted.code,
      report: formatted.stdout + formatted.stderr,
      violations: result.summary.violations,
      errorCount: result.summary.error,
      modules: result.modules.map((module) => module.source),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
