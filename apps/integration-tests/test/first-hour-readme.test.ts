import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_TENANT_ID, ensureDemoTenant, hashApiKey } from '@veetbot/composition';
import { createStores, openMigratedMemoryDatabase } from '@veetbot/store-postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { TEMPLATE_CACHE } from '../src/test-database';

/**
 * Issue 30 items 2 and 5 (docs/adr/0057): the README is what a newcomer copies, so it is tested
 * like code.
 *
 * - Every ```sh block of README.md is either run here, line by line as a newcomer would paste
 *   it (the real `pnpm`, the real CLI, one fresh `VEETBOT_DATA_DIR`, no DATABASE_URL),
 *   with each line's exit code and key output checked against EXPECTED below — or it is marked
 *   `<!-- readme-test: not run — <reason> -->` on the line before its fence. A new block is run
 *   unless someone marks it; a new line in a run block fails until EXPECTED says what it prints.
 * - No README shell line has an unquoted `*` or `?` in an argument (a shell glob: it expands to
 *   whatever files match in the folder it is pasted in).
 * - The demo key's scopes the two READMEs list are the ones the demo tenant is created with.
 */
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const API_README = readFileSync(join(REPO, 'apps/api/README.md'), 'utf8');
const KEY = /vbk_[A-Za-z0-9_-]{16,128}/;

interface Block {
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly text: string;
  /** The reason it is not run, from the marker on the line before the fence; null: it is run. */
  readonly notRun: string | null;
}

function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`README.md:${i + 1}: a fence that never closes`);
    const marker = /^<!-- readme-test: not run — (.+) -->$/.exec(lines[i - 1] ?? '');
    blocks.push({ line: i + 1, lang: open[1]!, text: lines.slice(i + 1, end).join('\n'), notRun: marker?.[1] ?? null });
    i = end;
  }
  return blocks;
}

/** A block's command lines: continuation lines joined, blank lines and whole-line comments dropped. */
function commandLines(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * The glob characters a POSIX shell would expand in `line`: outside single and double quotes,
 * not escaped, not in a comment. Returns each as `char@column`.
 */
function unquotedGlobs(line: string): string[] {
  const found: string[] = [];
  let quote: "'" | '"' | null = null;
  let wordStart = true;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = null;
    } else if (c === '\\') {
      i++;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && wordStart) {
      break;
    } else if (c === '*' || c === '?') {
      found.push(`${c}@${i + 1}`);
    }
    wordStart = quote === null && /[\s;&|()]/.test(c);
  }
  return found;
}

interface Expectation {
  readonly exit: number;
  /** What the output must hold; `$1`… are the command's own captures. */
  readonly output: readonly RegExp[];
}

/**
 * What each runnable README line must do. The key is matched against the whole line; the first
 * match wins. A runnable line no entry matches fails the test: say what it prints, or mark its
 * block.
 */
const EXPECTED: readonly (readonly [RegExp, (m: RegExpExecArray) => Expectation])[] = [
  [/^pnpm veetbot tenant create (\S+)$/, (m) => ({ exit: 0, output: [new RegExp(`^tenant ${m[1]} created$`, 'm')] })],
  [
    /^pnpm veetbot key create --tenant (\S+) --principal (\S+) --scopes '?([^' ]+)'?$/,
    // The scopes arrive exactly as written: nothing expanded, nothing dropped.
    (m) => ({
      exit: 0,
      output: [new RegExp(`^key \\S+ for principal ${m[2]} of tenant ${m[1]}, scopes ${literal(m[3]!)}$`, 'm'), KEY],
    }),
  ],
  [/^pnpm veetbot key revoke --key vbk_\S+/, () => ({ exit: 0, output: [/^key \S+ of tenant \S+ revoked at \S+$/m] })],
  [/^pnpm veetbot registry list$/, () => ({ exit: 0, output: [/^math\.evaluate\s+1\.0\.0\s+capability/m, /^demo\.external_write\s/m] })],
  [/^pnpm veetbot call math\.evaluate .*--dry-run$/, () => ({ exit: 0, output: [/"stage": "authorized"/, /"effect": "allow"/] })],
  [
    /^pnpm veetbot call demo\.external_write .*--dry-run --context-trust user,external_untrusted$/,
    () => ({ exit: 0, output: [/"stage": "approval_required"/, /"origin_trust": "external_untrusted"/] }),
  ],
  [
    /^pnpm veetbot call nope\.nothing .*--dry-run\s+# denied: (\S+)$/,
    (m) => ({ exit: 0, output: [/"status": "denied"/, new RegExp(`"reason_code": "${literal(m[1]!)}"`)] }),
  ],
];

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** The pinned pnpm's own bin folder (what `npx -y pnpm@10.34.8` runs), so `pnpm` runs as written. */
function pnpmBin(): string {
  const path = execFileSync('npx', ['-y', '-p', 'pnpm@10.34.8', 'sh', '-c', 'command -v pnpm'], { encoding: 'utf8' }).trim();
  return dirname(path);
}

const blocks = fencedBlocks(README);
const shellBlocks = blocks.filter((b) => b.lang === 'sh');

describe("the README's shell blocks", () => {
  it('are found, and every one that is not run says why', () => {
    expect(shellBlocks.length).toBeGreaterThanOrEqual(10);
    // A marker on a block no one runs is a statement about that block; it must have a reason.
    for (const block of shellBlocks.filter((b) => b.notRun !== null))
      expect(block.notRun!.length, `README.md:${block.line}`).toBeGreaterThan(10);
    // The blocks this test runs: the tenants and keys, the walkthrough's keys, the dry runs.
    expect(shellBlocks.filter((b) => b.notRun === null).length).toBeGreaterThanOrEqual(3);
  });

  it('have no unquoted * or ? in a shell argument (a glob the shell would expand)', () => {
    // The check itself: the README's old line is caught, its quoted form is not.
    expect(unquotedGlobs('pnpm veetbot key create --tenant acme --scopes workspace.read,mcp.*')).toEqual(['*@67']);
    expect(unquotedGlobs("pnpm veetbot key create --tenant acme --scopes 'workspace.read,mcp.*'")).toEqual([]);
    expect(unquotedGlobs('curl http://x/y?z=1 -d "a*b" # why?')).toEqual(['?@16']);
    const offenders = shellBlocks.flatMap((b) =>
      commandLines(b.text).flatMap((line) => unquotedGlobs(line).map((at) => `README.md:${b.line}: ${at} in ${line}`)),
    );
    expect(offenders).toEqual([]);
  });

  it('run as written, each line with its exit code and key output (one fresh data folder, PGlite)', () => {
    const bin = pnpmBin();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && k !== 'DATABASE_URL' && k !== 'NODE_OPTIONS' && !k.startsWith('VEETBOT_') && !k.startsWith('npm_')) env[k] = v;
    env.PATH = `${bin}${delimiter}${process.env.PATH ?? ''}`;
    // One data folder for the whole README, as a newcomer's checkout has one `.veetbot`.
    const dataDir = mkdtempSync(join(tmpdir(), 'veetbot-readme-'));
    folders.push(dataDir);
    let ran = 0;
    for (const block of shellBlocks.filter((b) => b.notRun === null)) {
      let lastKey: string | null = null;
      for (const line of commandLines(block.text)) {
        const where = `README.md:${block.line}: ${line}`;
        const rule = EXPECTED.map(([pattern, expect]) => {
          const m = pattern.exec(line);
          return m === null ? null : expect(m);
        }).find((e) => e !== null);
        expect(rule, `${where}\nno expectation for this line: add one to EXPECTED, or mark its block`).toBeDefined();
        // The one placeholder a runnable line may hold: the key an earlier line of its block printed.
        const command = line.replace(/vbk_…/g, () => {
          expect(lastKey, `${where}: vbk_… with no key printed before it`).not.toBeNull();
          return lastKey!;
        });
        const run = spawnSync('sh', ['-c', command], { cwd: REPO, env: { ...env, VEETBOT_DATA_DIR: dataDir }, encoding: 'utf8' });
        const output = `${run.stdout}${run.stderr}`;
        expect(run.status, `${where}\n${output}`).toBe(rule!.exit);
        for (const pattern of rule!.output) expect(output, where).toMatch(pattern);
        lastKey = KEY.exec(run.stdout)?.[0] ?? lastKey;
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(10);
  }, 120_000);
});

describe("the demo key's documented scopes", () => {
  /** The backquoted names of a list that follows `lead` in `markdown`, up to the list's end. */
  function listedAfter(markdown: string, lead: string): string[] {
    const flat = markdown.replace(/\s*\n\s*/g, ' ');
    const at = flat.indexOf(lead);
    expect(at, `"${lead}" not found`).toBeGreaterThanOrEqual(0);
    const list = /^((?:`[^`]+`(?:, )?)+)/.exec(flat.slice(at + lead.length).trimStart())?.[1] ?? '';
    return [...list.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  }

  it('are, in both READMEs, exactly the scopes the demo tenant is created with', async () => {
    // The composed scopes: the demo tenant made as `pnpm start` makes it, its key read back.
    const database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
    try {
      const stores = createStores(database);
      const demo = await ensureDemoTenant(stores, null, new Date());
      expect(demo.kind).toBe('created');
      const row = await stores.apiKeys.findByHash(hashApiKey((demo as { key: string }).key));
      expect(row?.tenantId).toBe(DEMO_TENANT_ID);
      const composed = [...(row?.scopes ?? [])];
      expect(composed).toContain('sandbox.run');

      const readme = listedAfter(README, "The demo key's scopes:");
      const api = listedAfter(API_README, 'its key are created once (scopes:');
      expect(new Set(readme)).toEqual(new Set(composed));
      expect(readme).toHaveLength(composed.length);
      expect(new Set(api)).toEqual(new Set(composed));
      expect(api).toHaveLength(composed.length);
    } finally {
      await database.close();
    }
  }, 60_000);
});
