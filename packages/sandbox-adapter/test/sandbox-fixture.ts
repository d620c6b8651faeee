import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SandboxLimits, SandboxResult } from '@veetbot/ports';
import type { BubblewrapSandbox } from '../src/index';

export const LIMITS: SandboxLimits = {
  wallSeconds: 10,
  cpuSeconds: 5,
  memoryBytes: 512 * 1024 * 1024,
  processes: 64,
  outputBytes: 1024 * 1024,
};

/** A data folder like the worker's: the adapter's state, and two runs' workspaces. */
export function makeDataDir(): {
  root: string;
  stateDir: string;
  workspaceRoot: string;
  workspace: string;
  otherWorkspace: string;
  cleanup(): void;
} {
  const root = mkdtempSync(path.join(tmpdir(), 'veetbot-sandbox-'));
  // A root worker's data folder must be traversable by the sandbox's host user (docs/adr/0037).
  chmodSync(root, 0o711);
  const stateDir = path.join(root, 'sandbox');
  const workspace = path.join(root, 'workspaces', 'tenant', 'run-a');
  const otherWorkspace = path.join(root, 'workspaces', 'tenant', 'run-b');
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  mkdirSync(otherWorkspace, { recursive: true, mode: 0o700 });
  chmodSync(path.dirname(workspace), 0o700);
  return {
    root,
    stateDir,
    workspaceRoot: path.join(root, 'workspaces'),
    workspace,
    otherWorkspace,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export async function sh(
  sandbox: BubblewrapSandbox,
  workspace: string,
  script: string,
  limits: Partial<SandboxLimits> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<SandboxResult> {
  return sandbox.run({ argv: ['/bin/sh', '-c', script], workspaceHostPath: workspace, limits: { ...LIMITS, ...limits } }, signal);
}
