import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'veetbot-cli-'));

/** The real CLI in a real process, as `pnpm veetbot …` runs it. */
async function veetbot(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, VEETBOT_DATA_DIR: dataDir },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('veetbot CLI', { timeout: 60_000 }, () => {
  it('registry list shows every builtin, its classification, and the pin hash', async () => {
    const { code, stdout } = await veetbot('registry', 'list');
    expect(code).toBe(0);
    for (const name of [
      'math.evaluate',
      'system.time',
      'workspace.read_text',
      'workspace.write_text',
      'workspace.list',
      'demo.external_write',
    ]) {
      expect(stdout).toMatch(new RegExp(`^${name.replace('.', '\\.')}\\s`, 'm'));
    }
    expect(stdout).toMatch(/demo\.external_write\s+\S+\s+capability\s+external_write\s+medium\s+non_idempotent/);
    expect(stdout).toMatch(/^tool_schema_sha256 [0-9a-f]{64}$/m);
  });

  it('call --dry-run runs steps 1–7 and reports the canonical form and policy decision', async () => {
    const { code, stdout } = await veetbot('call', 'math.evaluate', '--args', '{"expression":"2*(3+4)"}', '--dry-run');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ stage: 'authorized', canonical_arguments: '{"expression":"2*(3+4)"}', policy: { effect: 'allow' } });
    expect(out.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('an external write after untrusted context needs approval; an unknown tool is denied', async () => {
    const write = JSON.parse(
      (await veetbot('call', 'demo.external_write', '--args', '{"line":"hi"}', '--dry-run', '--context-trust', 'user,external_untrusted'))
        .stdout,
    );
    expect(write).toMatchObject({
      stage: 'approval_required',
      origin_trust: 'external_untrusted',
      policy: { reason_code: 'policy.matrix.external_write' },
    });
    const unknown = JSON.parse((await veetbot('call', 'nope.nothing', '--args', '{}', '--dry-run')).stdout);
    expect(unknown.item.outcome).toMatchObject({ status: 'denied', reason_code: 'policy.matrix.unknown_tool' });
  });

  it('invalid arguments fail with the schema path and no echo of the value', async () => {
    const { stdout } = await veetbot('call', 'math.evaluate', '--args', '{"expression":"1","SECRET_SENTINEL":1}', '--dry-run');
    const out = JSON.parse(stdout);
    expect(out.item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.arguments_invalid' });
    expect(stdout).not.toContain('SECRET_SENTINEL');
  });

  it('bad input gets a stable error and a non-zero exit', async () => {
    const notJson = await veetbot('call', 'math.evaluate', '--args', '{not json', '--dry-run');
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('cli.args_not_json');
    const noDryRun = await veetbot('call', 'math.evaluate', '--args', '{}');
    expect(noDryRun.code).toBe(2);
    const unknownCommand = await veetbot('frobnicate');
    expect(unknownCommand.code).toBe(2);
  });

  it('start lists the registry and dry-runs the sample call', async () => {
    const { code, stdout } = await veetbot('start');
    expect(code).toBe(0);
    expect(stdout).toContain('tool_schema_sha256');
    expect(stdout).toContain('"stage": "approval_required"');
  });
});
