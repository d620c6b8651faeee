import { execFile } from 'node:child_process';
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, startEmbeddedScene, startScene } from '../src/e2e-processes';

/*
 * Issue 26 item 5 (docs/adr/0071): @veetbot/client as someone outside this repository gets it.
 * The package is built and packed with npm (packages/client/scripts/build-package.mjs), the
 * tarball is installed with npm into a fresh folder under the system's temporary directory (no
 * workspace above it, no links into this repository; npm's cache inside that folder), the
 * agent in client-consumer/agent.ts is type-checked there by the `typescript` npm installed,
 * compiled, and run under plain Node against a live api started here (with DATABASE_URL the api
 * and a worker process on a fresh PostgreSQL database, otherwise `pnpm start`'s one process): a
 * session, a run, a step held for an approval, the approval, the settled step, the event stream,
 * a typed ApiError.
 */

const run = promisify(execFile);
const CONSUMER = join(REPO, 'apps/integration-tests/client-consumer');
/** The consumer's own tools, pinned: the workspace's TypeScript and Node types. */
const CONSUMER_DEPENDENCIES = ['typescript@5.9.3', '@types/node@20.19.43'];

let folder: string;
let tarball: string;
/** The live api: with DATABASE_URL the split deployment (api and a worker process), else `pnpm start`'s one process on PGlite. */
let scene: { readonly baseUrl: string; readonly demoKey: string; close(): Promise<void> };

/** npm with none of the npm_/pnpm_ settings the test runner inherited, and its cache in `folder`. */
function npmEnv(): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm|pnpm)_/i.test(k)));
  return {
    ...clean,
    npm_config_cache: join(folder, '.npm-cache'),
    npm_config_userconfig: join(folder, '.npmrc'),
    npm_config_update_notifier: 'false',
  };
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'veetbot-client-consumer-'));
  await writeFile(join(folder, '.npmrc'), '');
  // Build and pack first (CPU), then install (network) while the api migrates (CPU).
  const packed = await run(
    process.execPath,
    [join(REPO, 'packages/client/scripts/build-package.mjs'), '--out', join(folder, 'build'), '--pack', join(folder, 'packed')],
    { cwd: REPO, env: npmEnv() },
  );
  tarball = packed.stdout.trim();
  const app = join(folder, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' })}\n`);
  for (const file of ['agent.ts', 'misuse.ts', 'tsconfig.json']) await copyFile(join(CONSUMER, file), join(app, file));
  // Settled, not all: an api that started is closed by afterAll even when the install failed.
  const [started, installed] = await Promise.allSettled([
    process.env.DATABASE_URL ? startScene({ workers: 1 }) : startEmbeddedScene(),
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', tarball, ...CONSUMER_DEPENDENCIES], {
      cwd: app,
      env: npmEnv(),
      timeout: 240_000,
    }),
  ]);
  if (started.status === 'fulfilled') scene = started.value;
  for (const result of [started, installed]) if (result.status === 'rejected') throw result.reason;
}, 300_000);

afterAll(async () => {
  await scene?.close();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

describe('@veetbot/client installed from its tarball outside the repository', () => {
  it('packs a manifest with no workspace ranges, and installs as files, with zod its one dependency', async () => {
    expect(tarball).toMatch(/veetbot-client-\d+\.\d+\.\d+\.tgz$/);
    const app = join(folder, 'app');
    expect((await realpath(app)).startsWith(REPO)).toBe(false);
    const installed = join(app, 'node_modules/@veetbot/client');
    expect((await lstat(installed)).isSymbolicLink()).toBe(false);
    expect((await readdir(installed)).sort()).toEqual(['LICENSE', 'README.md', 'index.d.ts', 'index.js', 'package.json']);
    const manifest = await readFile(join(installed, 'package.json'), 'utf8');
    expect(manifest).not.toMatch(/workspace:|catalog:/);
    expect(JSON.parse(manifest).dependencies).toEqual({ zod: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    // Nothing else of the workspace came along.
    expect(await readdir(join(app, 'node_modules/@veetbot'))).toEqual(['client']);
    const lock = JSON.parse(await readFile(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    expect(lock.packages['node_modules/@veetbot/client']?.resolved).toMatch(/^file:.*veetbot-client-\d+\.\d+\.\d+\.tgz$/);
  });

  it('type-checks the typed agent with the installed typescript, and rejects misuse of the types', async () => {
    const app = join(folder, 'app');
    // One program (agent.ts and misuse.ts, library files checked too): tsc still emits agent.js,
    // and every error must be one of misuse.ts's three deliberate mistakes, on the line marked.
    const failed = (await run(process.execPath, [join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: app }).then(
      () => null,
      (e: { stdout: string }) => e,
    )) as { stdout: string } | null;
    expect(failed, 'misuse.ts type-checked: the declarations are not typing the calls').not.toBeNull();
    const errors = failed!.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    const marked = (await readFile(join(app, 'misuse.ts'), 'utf8'))
      .split('\n')
      .flatMap((line, at) => (line.includes('// tsc-error') ? [`misuse.ts:${at + 1}`] : []));
    expect(marked).toHaveLength(3);
    expect(errors.map((line) => /^([^(]+)\((\d+),/.exec(line)?.slice(1).join(':'))).toEqual(marked);
    await expect(lstat(join(app, 'out/agent.js'))).resolves.toBeDefined();
  });

  it('runs the compiled agent under plain Node against the live api: session, step, approval, events, ApiError', async () => {
    const app = join(folder, 'app');
    const { stdout } = await run(process.execPath, [join(app, 'out/agent.js')], {
      cwd: app,
      env: { PATH: process.env.PATH ?? '', VEETBOT_URL: scene.baseUrl, VEETBOT_API_KEY: scene.demoKey },
      timeout: 120_000,
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(seen).toMatchObject({
      health: 'ok',
      tools: ['demo.external_write', 'math.evaluate'],
      run_status: 'running',
      first_status: 'waiting_for_approval',
      approval_listed: 'demo.external_write',
      approval_status: 'approved',
      items: [
        ['m', 'succeeded'],
        ['w', 'succeeded'],
      ],
      missing: { status: 404, code: 'not_found' },
    });
    // The result as the model gets it: inside the trust envelope (§ trust), the value on its own line.
    expect(seen.text).toMatch(/^⟦untrusted source="math\.evaluate"[^\n]*⟧\n42\n⟦\/untrusted /);
    expect(seen.event_sequences).toEqual(seen.event_sequences.map((_: unknown, i: number) => i + 1));
    expect(seen.event_types).toContain('approval.decided');
    expect(seen.event_types.filter((t: string) => t === 'tool.call.completed')).toHaveLength(2);
  });

  it('is requirable from CommonJS on this Node (require of an ES module), with the same exports', async () => {
    const app = join(folder, 'app');
    const { stdout } = await run(
      process.execPath,
      ['-e', "console.log(Object.keys(require('@veetbot/client')).includes('VeetbotClient'))"],
      {
        cwd: app,
      },
    );
    expect(stdout.trim()).toBe('true');
  });
});
