import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A real folder per test: `base/ws` is the workspace root, `base/outside` holds a secret
 * that no workspace tool may reach. Uses the synchronous node:fs API on purpose: the
 * watermark test instruments node:fs/promises and must not see the fixture's own writes.
 */
export interface TempWorkspace {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly secret: string;
  cleanup(): void;
}

export const SECRET_TEXT = 'outside-the-workspace';

export function createTempWorkspace(): TempWorkspace {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'veetbot-tools-')));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  const secret = path.join(outside, 'secret.txt');
  writeFileSync(secret, SECRET_TEXT);
  return { base, root, outside, secret, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}
