import { afterAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox } from '../src/index';
import { compileSeccompFilter, syscallTable } from '../src/seccomp-filter';
import { makeDataDir } from './sandbox-fixture';

// docs/adr/0037: the seccomp filter, compiled in TypeScript and installed by bwrap. Each probe
// is a call the sandbox's namespaces alone would let through (or answer differently).
const data = makeDataDir();
const sandbox = new BubblewrapSandbox({ stateDir: data.stateDir, workspaceRoot: data.workspaceRoot });
afterAll(() => data.cleanup());

const PROBE = `
import ctypes, os, socket, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(result):
    return ctypes.get_errno() if result == -1 else 0
def sock(family):
    try:
        socket.socket(family, socket.SOCK_STREAM if family != socket.AF_NETLINK else socket.SOCK_RAW).close()
        return 0
    except OSError as error:
        return error.errno
keyctl = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
print("keyctl", errno_of(libc.syscall(keyctl, 0, -3, 0)), flush=True)
print("af_unix", sock(socket.AF_UNIX), flush=True)
print("af_inet", sock(socket.AF_INET), flush=True)
print("af_inet6", sock(socket.AF_INET6), flush=True)
print("af_netlink", sock(socket.AF_NETLINK), flush=True)
t = threading.Thread(target=lambda: None); t.start(); t.join()
print("thread", 0, flush=True)
print("subprocess", subprocess.run(["true"]).returncode, flush=True)
# Last: each of these changes the process when it is allowed.
print("unshare", errno_of(libc.unshare(0x10000000)), flush=True)
print("ptrace", errno_of(libc.ptrace(0, 0, None, None)), flush=True)
`;

describe('the seccomp filter', () => {
  it('compiles to whole sock_filter instructions and ends by killing a foreign ABI', () => {
    const table = syscallTable();
    expect(table).not.toBeNull();
    const filter = compileSeccompFilter(table!);
    expect(filter.length % 8).toBe(0);
    // The last instruction: BPF_RET|BPF_K with SECCOMP_RET_KILL_PROCESS.
    expect(filter.readUInt16LE(filter.length - 8)).toBe(0x06);
    expect(filter.readUInt32LE(filter.length - 4)).toBe(0x80000000);
  });

  it('denies ptrace, keyctl, new namespaces and every socket family but AF_UNIX; threads and processes still work', async () => {
    const result = await sandbox.run(
      {
        argv: ['/usr/bin/python3', '-c', PROBE],
        workspaceHostPath: data.workspace,
        limits: { wallSeconds: 10, cpuSeconds: 5, memoryBytes: 512 * 1024 * 1024, processes: 32, outputBytes: 65_536 },
      },
      new AbortController().signal,
    );
    expect(result.ending, result.stderr.text).toBe('exited');
    const seen = Object.fromEntries(
      result.stdout.text
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string]),
    );
    expect(seen).toEqual({
      ptrace: '1', // EPERM: without the filter PTRACE_TRACEME succeeds
      keyctl: '1',
      unshare: '1', // without the filter a nested user namespace is allowed
      af_unix: '0',
      af_inet: '97', // EAFNOSUPPORT
      af_inet6: '97',
      af_netlink: '97',
      thread: '0',
      subprocess: '0',
    });
  });
});
