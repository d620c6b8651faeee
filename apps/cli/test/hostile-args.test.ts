import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'veetbot-cli-hostile-'));

/**
 * ADR 0019: the CLI's dry run reaches the pipeline without the api, and gets the api's verdict
 * on hostile arguments as a tool-call failure (tool.arguments_invalid at step 4), never a crash.
 * The arguments are raw JSON text on the command line, escapes and all.
 */
describe('veetbot call --dry-run with hostile arguments', { timeout: 60_000 }, () => {
  it.each([
    ['a NUL in a value', '{"expression":"1\\u0000"}', 'json.nul_character'],
    ['a lone surrogate', '{"expression":"\\ud800"}', 'json.lone_surrogate'],
    ['a __proto__ key', '{"__proto__":{"expression":"1"}}', 'json.reserved_key'],
    ['nesting 10,000 deep', `{"expression":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, 'json.too_deep'],
  ])('%s: FAILED tool.arguments_invalid, exit 0', async (_name, args, code) => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'apps/cli/src/main.ts', 'call', 'math.evaluate', '--args', args, '--dry-run'],
      {
        cwd: root,
        env: { ...process.env, VEETBOT_DATA_DIR: dataDir },
      },
    );
    const out = JSON.parse(stdout) as { item: { outcome: { status: string; reason_code: string }; content: unknown } };
    expect(out.item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.arguments_invalid' });
    expect(JSON.stringify(out.item.content)).toContain(code);
  });
});
