import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox } from '../src/index';
import { makeDataDir, sh } from './sandbox-fixture';

// ADR-0008 and docs/adr/0037: each proof runs real code in the real sandbox (bubblewrap).
const data = makeDataDir();
const sandbox = new BubblewrapSandbox({ stateDir: data.stateDir, workspaceRoot: data.workspaceRoot });
const CANARY = `veetbot-canary-${process.pid}-${Date.now()}`;

let server: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  expect(await sandbox.availability()).toEqual({ available: true });
  process.env.VEETBOT_SANDBOX_TEST_CANARY = CANARY;
  server = createServer((socket) => {
    connections += 1;
    socket.end('hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  writeFileSync(path.join(data.otherWorkspace, 'secret.txt'), 'another run');
  writeFileSync(path.join(data.root, 'secrets.key'), CANARY);
});

afterAll(async () => {
  delete process.env.VEETBOT_SANDBOX_TEST_CANARY;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  data.cleanup();
});

describe('no network', () => {
  it('cannot connect to a listener the test opened on 127.0.0.1', async () => {
    // bash's /dev/tcp: a plain connect(2), no helper program needed.
    const result = await sh(sandbox, data.workspace, `/bin/bash -c 'echo hi > /dev/tcp/127.0.0.1/${port}' && echo CONNECTED`);
    expect(result.ending).toBe('exited');
    expect(result.stdout.text).not.toContain('CONNECTED');
    expect(result.exitCode).not.toBe(0);
    expect(connections).toBe(0);
  });

  it('has no route out and no DNS', async () => {
    const result = await sh(
      sandbox,
      data.workspace,
      'getent hosts example.com && echo RESOLVED; /bin/bash -c "echo > /dev/tcp/1.1.1.1/53" && echo ROUTED; ls /sys/class/net 2>/dev/null; cat /proc/net/dev | tail -n +3 | cut -d: -f1',
    );
    expect(result.stdout.text).not.toContain('RESOLVED');
    expect(result.stdout.text).not.toContain('ROUTED');
    // The network namespace holds its own loopback and nothing else.
    expect(result.stdout.text.split(/\s+/).filter((word) => word !== '')).toEqual(['lo']);
  });
});

describe('no host files', () => {
  it('cannot read /etc/shadow, the data folder, another run’s workspace or the worker’s environment', async () => {
    const result = await sh(
      sandbox,
      data.workspace,
      [
        'cat /etc/shadow && echo READ_SHADOW',
        `cat ${data.root}/secrets.key && echo READ_DATA`,
        `cat ${data.otherWorkspace}/secret.txt && echo READ_OTHER`,
        'cat ../run-b/secret.txt && echo READ_SIBLING',
        'cat /proc/1/environ | tr "\\0" "\\n"',
        'ls /etc',
        'true',
      ].join('; '),
    );
    expect(result.ending).toBe('exited');
    for (const marker of ['READ_SHADOW', 'READ_DATA', 'READ_OTHER', 'READ_SIBLING', CANARY, 'another run']) {
      expect(result.stdout.text).not.toContain(marker);
    }
    // /etc holds only what the loader and interpreters read, plus the synthesized identity.
    expect(result.stdout.text).toContain('passwd');
    expect(result.stdout.text).not.toMatch(/^shadow$|^hostname$|^resolv\.conf$/m);
  });

  it('writes only the workspace: / and /usr are read-only, /tmp is private and gone after the run', async () => {
    const result = await sh(
      sandbox,
      data.workspace,
      'touch /usr/x && echo WROTE_USR; touch /x && echo WROTE_ROOT; echo data > /tmp/private && echo tmp-ok; echo out > result.txt; pwd',
    );
    expect(result.stdout.text).not.toContain('WROTE_USR');
    expect(result.stdout.text).not.toContain('WROTE_ROOT');
    expect(result.stdout.text).toContain('tmp-ok');
    expect(result.stdout.text).toContain('/workspace');
    const again = await sh(sandbox, data.workspace, 'cat /tmp/private || echo GONE; cat result.txt');
    expect(again.stdout.text).toContain('GONE');
    expect(again.stdout.text).toContain('out');
  });

  it('runs as an unprivileged sandbox user with no capabilities', async () => {
    const result = await sh(sandbox, data.workspace, 'id -u; id -g; grep ^CapEff /proc/self/status; grep ^NoNewPrivs /proc/self/status');
    const [uid, gid, capEff, noNewPrivs] = result.stdout.text.trim().split('\n');
    expect(uid).toBe('1000');
    expect(gid).toBe('1000');
    expect(capEff).toMatch(/^CapEff:\s+0+$/);
    expect(noNewPrivs).toMatch(/^NoNewPrivs:\s+1$/);
  });
});

describe('no secrets', () => {
  it('sees only the synthesized environment: a canary in the worker’s environment never appears', async () => {
    const result = await sh(sandbox, data.workspace, 'env; echo ---; cat /proc/self/environ | tr "\\0" "\\n"');
    expect(result.stdout.text).not.toContain(CANARY);
    expect(result.stdout.text).not.toContain('VEETBOT_SANDBOX_TEST_CANARY');
    const names = result.stdout.text
      .split('---')[0]
      ?.trim()
      .split('\n')
      .map((line) => line.split('=')[0])
      .sort();
    // PWD is the shell's own; the rest is RULINGS.md's synthesized tier.
    expect(names).toEqual(['HOME', 'LANG', 'PATH', 'PWD', 'TZ']);
    expect(result.stdout.text).toContain('LANG=C.UTF-8');
    expect(result.stdout.text).toContain('TZ=UTC');
    expect(result.stdout.text).toContain('HOME=/home/sandbox');
  });
});

describe('descriptors', () => {
  it('the program holds only stdin, stdout and stderr', async () => {
    // The glob opens the folder it lists: that one descriptor is the shell's own.
    const result = await sh(sandbox, data.workspace, 'cd /proc/self/fd && for fd in *; do echo $fd; done');
    const fds = result.stdout.text.trim().split('\n').map(Number);
    expect(fds.filter((fd) => fd > 2).length).toBeLessThanOrEqual(1);
    expect(fds.slice(0, 3)).toEqual([0, 1, 2]);
  });
});
