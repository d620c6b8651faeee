import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { filesMatching, loadManifests, workspaceDirs, type PackageManifest } from '../src/manifest';
import { postgresAnswers } from '../src/postgres-probe';
import { FULL_RUN_COMMAND, summarize, type SummaryInput } from '../src/summary';

/**
 * ADR 0026: the summary at the end of `pnpm test` is read from the same postgres-only.json
 * files the vitest configs exclude, says which hard gates did not run and the one line that
 * runs them, and says every gate ran when DATABASE_URL is set (CI).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.ts');
const manifests = loadManifests(ROOT);

const input = (over: Partial<SummaryInput>): SummaryInput => ({
  manifests,
  databaseUrl: undefined,
  localPostgres: false,
  ci: false,
  previousStatus: 0,
  ...over,
});

describe('the lists the vitest configs and the summary share', () => {
  it('are found in the packages that leave files out, and every pattern names files that exist', () => {
    expect(manifests.map((m) => m.dir)).toEqual([
      'apps/api',
      'apps/cli',
      'apps/composition',
      'apps/integration-tests',
      'apps/worker',
      'packages/store-postgres',
      'tooling/bench',
    ]);
    for (const m of manifests)
      for (const f of m.files) expect(filesMatching(ROOT, m.dir, f.pattern), `${m.dir}/${f.pattern}`).not.toEqual([]);
    expect(filesMatching(ROOT, 'apps/integration-tests', 'test/e2e-*.test.ts').length).toBeGreaterThanOrEqual(5);
    expect(filesMatching(ROOT, 'apps/integration-tests', 'test/e2e-*.test.ts').every((f) => /^test\/e2e-[^/]+\.test\.ts$/.test(f))).toBe(
      true,
    );
  });

  const original = process.env.DATABASE_URL;
  afterEach(() => {
    if (original === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = original;
    vi.resetModules();
  });

  async function excludeOf(dir: string, databaseUrl: string | undefined): Promise<string[]> {
    if (databaseUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = databaseUrl;
    vi.resetModules();
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const config = (await import(path.join(ROOT, dir, 'vitest.config.ts'))) as { default: { test?: { exclude?: string[] } } };
    vi.restoreAllMocks();
    return config.default.test?.exclude ?? [];
  }

  it.each(manifests.map((m) => ({ dir: m.dir, m })))(
    '$dir/vitest.config.ts excludes exactly its list without DATABASE_URL, and nothing of it with',
    async ({ dir, m }) => {
      const patterns = m.files.map((f) => f.pattern);
      expect((await excludeOf(dir, undefined)).filter((p) => !p.includes('node_modules'))).toEqual(patterns);
      expect((await excludeOf(dir, '')).filter((p) => !p.includes('node_modules'))).toEqual(patterns);
      expect((await excludeOf(dir, 'postgres://postgres@127.0.0.1:5432/test')).filter((p) => !p.includes('node_modules'))).toEqual([]);
    },
  );

  it('no test file registers its tests only when DATABASE_URL is set: such a file belongs in postgres-only.json', () => {
    const offenders: string[] = [];
    for (const dir of workspaceDirs(ROOT)) {
      const folder = path.join(ROOT, dir, 'test');
      if (!existsSync(folder)) continue;
      for (const entry of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
        if (!entry.endsWith('.test.ts')) continue;
        const text = readFileSync(path.join(folder, entry), 'utf8');
        // A top-level `if (...) {` whose first statement registers tests, or vitest's own conditional registration.
        if (
          /^if \([^\n]*\) \{\s*\n\s*(describe|it|test)(\.each\([^\n]*\))?\(/m.test(text) ||
          /\b(describe|it|test)\.(skipIf|runIf|skip)\(/.test(text)
        )
          offenders.push(`${dir}/test/${entry}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('the summary without DATABASE_URL', () => {
  it('names hard gates 7, 8 and 11, every file left out with why, what of gate 8 ran on PGlite, and the one line that runs them', () => {
    const summary = summarize(input({}));
    expect(summary.complete).toBe(false);
    expect(summary.gatesNotRun).toEqual([7, 8, 11]);
    expect(summary.text).toContain('HARD GATES 7, 8 AND 11 DID NOT RUN IN FULL: DATABASE_URL is not set.');
    expect(summary.text).toContain('Hard gate 7: a recorded crash at each of the fourteen pipeline steps');
    expect(summary.text).toContain('Hard gate 8: two concurrent submissions of the same call produce one execution');
    expect(summary.text).toContain('what did run, on PGlite: apps/integration-tests/test/gate-08-one-process.test.ts');
    for (const m of manifests) for (const f of m.files) expect(summary.text).toContain(`${m.dir}/${f.pattern}\n`);
    for (const m of manifests) for (const f of m.files) expect(summary.text).toContain(`why: ${f.why}`);
    expect(summary.text).toContain(`\n    ${FULL_RUN_COMMAND}\n`);
    expect(FULL_RUN_COMMAND).toBe('DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx -y pnpm@10.34.8 test');
    // It comes last: nothing after the closing rule.
    expect(summary.text.trimEnd().split('\n').at(-1)).toMatch(/^!{78}$/);
    expect(summary.exitCode).toBe(0);
  });

  it('says whether a PostgreSQL answers at 127.0.0.1:5432', () => {
    expect(summarize(input({ localPostgres: true })).text).toContain(
      'A PostgreSQL server answers at 127.0.0.1:5432, but DATABASE_URL is not set.',
    );
    expect(summarize(input({ localPostgres: false })).text).toContain('No PostgreSQL answers at 127.0.0.1:5432.');
  });

  it('an empty DATABASE_URL is unset, as the vitest configs read it', () => {
    expect(summarize(input({ databaseUrl: '' })).gatesNotRun).toEqual([7, 8, 11]);
  });

  it("fails the build on CI (hard gates fail the build) and passes a failed run's status through", () => {
    expect(summarize(input({ ci: true })).exitCode).toBe(1);
    expect(summarize(input({ ci: true })).text).toContain('CI is set: a hard gate or suite that did not run fails the build.');
    const failed = summarize(input({ previousStatus: 3 }));
    expect(failed.exitCode).toBe(3);
    expect(failed.text).toContain('The run also FAILED');
  });

  it('a list that asserts no hard gate is still named, under ALSO NOT RUN; a gate in no list is not named', () => {
    const only: PackageManifest[] = [{ dir: 'apps/x', files: [{ pattern: 'test/y.test.ts', what: 'y', why: 'because', hard_gates: [] }] }];
    const summary = summarize(input({ manifests: only }));
    expect(summary.gatesNotRun).toEqual([]);
    expect(summary.text).toContain('ALSO NOT RUN (need PostgreSQL):\n  apps/x/test/y.test.ts');
    expect(summary.text).not.toContain('Hard gate');
  });
});

describe('the summary with DATABASE_URL', () => {
  it('says every hard gate ran, names the server without its password, and leaves nothing out', () => {
    const summary = summarize(input({ databaseUrl: 'postgres://postgres:hunter2@127.0.0.1:5432/test', ci: true }));
    expect(summary.complete).toBe(true);
    expect(summary.gatesNotRun).toEqual([]);
    expect(summary.leftOut).toEqual([]);
    expect(summary.text).toContain(
      'Every hard gate and every test file was part of this run (DATABASE_URL=postgres://postgres:***@127.0.0.1:5432/test).',
    );
    expect(summary.text).not.toContain('hunter2');
    expect(summary.text).not.toContain('Hard gate 7');
    expect(summary.exitCode).toBe(0);
    expect(summarize(input({ databaseUrl: 'postgres://127.0.0.1/test', previousStatus: 1 })).exitCode).toBe(1);
  });
});

/** A TCP server on 127.0.0.1 that does `onConnection` with each socket; its port. */
async function server(onConnection: (socket: net.Socket) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const port = (s.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise((done) => {
        for (const socket of sockets) socket.destroy();
        s.close(() => done());
      }),
  };
}

describe('postgresAnswers: an SSLRequest, answered by one byte S or N', () => {
  it('is true for a server that answers the SSLRequest as PostgreSQL does, and sent exactly the SSLRequest', async () => {
    const received: Buffer[] = [];
    const pg = await server((socket) =>
      socket.once('data', (d: Buffer) => {
        received.push(d);
        socket.write('N');
      }),
    );
    try {
      expect(await postgresAnswers('127.0.0.1', pg.port)).toBe(true);
      expect(Buffer.concat(received).toString('hex')).toBe('0000000804d2162f');
    } finally {
      await pg.close();
    }
  });

  it('is false for a port nothing listens on, a server that hangs up, one that answers something else, and one that is silent', async () => {
    const closed = await server(() => undefined);
    const port = closed.port;
    await closed.close();
    expect(await postgresAnswers('127.0.0.1', port)).toBe(false);
    const hangsUp = await server((socket) => socket.destroy());
    const http = await server((socket) => socket.once('data', () => socket.write('HTTP/1.1 400 Bad Request\r\n\r\n')));
    const silent = await server(() => undefined);
    try {
      expect(await postgresAnswers('127.0.0.1', hangsUp.port)).toBe(false);
      expect(await postgresAnswers('127.0.0.1', http.port)).toBe(false);
      expect(await postgresAnswers('127.0.0.1', silent.port, 200)).toBe(false);
    } finally {
      await Promise.all([hangsUp.close(), http.close(), silent.close()]);
    }
  });
});

describe('main: the last step of `pnpm test`', () => {
  function runMain(env: Record<string, string>, status: string): Promise<{ code: number | null; stdout: string }> {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'CI'));
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, status], {
      cwd: ROOT,
      env: { ...clean, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    return new Promise((done) => child.on('exit', (code) => done({ code, stdout })));
  }

  it('without DATABASE_URL: the gates that did not run and the line; exit 0, or 1 on CI, or the status it was given', async () => {
    const plain = await runMain({}, '0');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('HARD GATES 7, 8 AND 11 DID NOT RUN IN FULL');
    expect(plain.stdout).toContain(FULL_RUN_COMMAND);
    expect((await runMain({ CI: 'true' }, '0')).code).toBe(1);
    expect((await runMain({}, '2')).code).toBe(2);
  });

  it('with DATABASE_URL (as .ci/run sets it): every gate ran, exit 0 on CI', async () => {
    const ci = await runMain({ CI: 'true', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }, '0');
    expect(ci.code).toBe(0);
    expect(ci.stdout).toContain('Every hard gate and every test file was part of this run');
    expect(ci.stdout).not.toContain('DID NOT RUN');
  });
});
