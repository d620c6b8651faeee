import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkspaceFiles, WorkspaceHandle } from '@veetbot/ports';
import { WorkspaceFileService, type WorkspaceHelperConfinement } from '@veetbot/sandbox-adapter';

/**
 * A real folder per test: `base/workspaces/<tenant-hash>/<run-id>` is the workspace root (the
 * provider's layout, which the confined helper requires), `base/outside` holds a secret that no
 * workspace tool may reach. The workspace's files go through the REAL confined helper
 * (docs/adr/0058), one per test file. Uses the synchronous node:fs API on purpose: the
 * watermark test instruments node:fs/promises and must not see the fixture's own writes.
 */
export interface TempWorkspace {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly secret: string;
  readonly handle: WorkspaceHandle;
  cleanup(): void;
}

export const SECRET_TEXT = 'outside-the-workspace';
export const TENANT_FOLDER = 'ab'.repeat(16);

/** One per workspaces folder; an idle helper holds no reference on the event loop and ends with the test process. */
const services = new Map<string, WorkspaceFileService>();

/** VEETBOT_TEST_WORKSPACE_HELPER=process runs the helper unconfined (the fallback where bwrap is missing). */
const confinement = (): WorkspaceHelperConfinement | undefined => {
  const wanted = process.env.VEETBOT_TEST_WORKSPACE_HELPER;
  return wanted === 'process' || wanted === 'bubblewrap' ? wanted : undefined;
};

/** The service of a workspaces folder, started once per test file. */
export function workspaceService(workspaces: string): WorkspaceFileService {
  let service = services.get(workspaces);
  if (service === undefined) {
    const wanted = confinement();
    service = new WorkspaceFileService({ workspaceRoot: workspaces, ...(wanted === undefined ? {} : { confinement: wanted }) });
    services.set(workspaces, service);
  }
  return service;
}

const unreachable: WorkspaceFiles = new Proxy({} as WorkspaceFiles, {
  get: () => async () => ({ ok: false, code: 'unavailable', detail: 'no workspace in this test' }),
});

/**
 * Fixture files stand for what a sandboxed program made, which the sandbox's host user owns; a
 * root test run writes them as root, so they are handed over here (test-side, trusted content).
 * The product never does this walk (docs/adr/0058).
 */
export function ownedBySandboxUser(root: string): void {
  if (process.getuid?.() !== 0) return;
  execFileSync('chown', ['-R', '--no-dereference', '65534:65534', root]);
}

/** The handle of a workspace folder in the provider's layout; anything else gets files that refuse. */
export function workspaceHandle(root: string): WorkspaceHandle {
  const workspaces = path.dirname(path.dirname(root));
  const service = workspaceService(workspaces);
  if (!service.covers(root)) return { root, files: unreachable };
  const handle = service.handle(root);
  ownedBySandboxUser(root);
  return handle;
}

export function createTempWorkspace(): TempWorkspace {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'veetbot-tools-')));
  const root = path.join(base, 'workspaces', TENANT_FOLDER, randomUUID());
  const outside = path.join(base, 'outside');
  mkdirSync(root, { recursive: true });
  mkdirSync(outside);
  const secret = path.join(outside, 'secret.txt');
  writeFileSync(secret, SECRET_TEXT);
  return { base, root, outside, secret, handle: workspaceHandle(root), cleanup: () => rmSync(base, { recursive: true, force: true }) };
}
