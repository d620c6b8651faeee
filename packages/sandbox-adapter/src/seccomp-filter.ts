/**
 * The seccomp filter bubblewrap installs before it executes the program (`--seccomp FD`),
 * compiled here to classic BPF in plain TypeScript (docs/adr/0037). It narrows the kernel the
 * program can reach beyond what the namespaces already take away:
 *
 * - ptrace, process_vm_readv/writev: no inspecting or steering another process;
 * - mount and the new mount API, umount2, pivot_root; unshare, setns, and clone with a
 *   namespace flag; clone3 answers ENOSYS (its flags sit behind a pointer a filter cannot
 *   read), so libc falls back to clone, whose flags it can;
 * - keyctl, add_key, request_key: the kernel keyring;
 * - bpf, perf_event_open, userfaultfd, io_uring, kexec and module loading,
 *   open_by_handle_at: large kernel surfaces no program here needs;
 * - socket and socketpair for any family but AF_UNIX (the later bridge's socket is a unix
 *   socket; there is no network to reach anyway, and netlink stays closed).
 *
 * A call from another ABI (x32, i386 on x86_64) kills the process: its numbers differ and
 * the list above would not apply to them.
 */

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const AF_UNIX = 1;
/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET and NEWTIME. */
const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;
const X32_SYSCALL_BIT = 0x40000000;

// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of args[0] (both supported architectures are little-endian). */
const OFFSET_ARG0 = 16;

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;

interface SyscallTable {
  readonly auditArch: number;
  readonly x32: boolean;
  readonly denied: readonly number[];
  readonly clone: number;
  readonly clone3: number;
  readonly socket: number;
  readonly socketpair: number;
}

const X86_64: SyscallTable = {
  auditArch: 0xc000003e,
  x32: true,
  // ptrace, process_vm_readv, process_vm_writev, mount, umount2, pivot_root, unshare, setns,
  // keyctl, add_key, request_key, bpf, perf_event_open, userfaultfd, io_uring_setup/enter/
  // register, kexec_load, kexec_file_load, init_module, finit_module, delete_module,
  // open_by_handle_at, open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr.
  denied: [
    101, 310, 311, 165, 166, 155, 272, 308, 250, 248, 249, 321, 298, 323, 425, 426, 427, 246, 320, 175, 313, 176, 304, 428, 429, 430, 431,
    432, 433, 442,
  ],
  clone: 56,
  clone3: 435,
  socket: 41,
  socketpair: 53,
};

const AARCH64: SyscallTable = {
  auditArch: 0xc00000b7,
  x32: false,
  denied: [
    117, 270, 271, 40, 39, 41, 97, 268, 219, 217, 218, 280, 241, 282, 425, 426, 427, 104, 294, 105, 273, 106, 265, 428, 429, 430, 431, 432,
    433, 442,
  ],
  clone: 220,
  clone3: 435,
  socket: 198,
  socketpair: 199,
};

type Label = 'allow' | 'eperm' | 'enosys' | 'eafnosupport' | 'kill' | 'clone' | 'socket' | 'next';
interface Instruction {
  readonly code: number;
  readonly k: number;
  readonly jt?: Label;
  readonly jf?: Label;
  readonly label?: Label;
}

const load = (offset: number): Instruction => ({ code: BPF_LD_W_ABS, k: offset });
const ret = (k: number, label?: Label): Instruction => (label === undefined ? { code: BPF_RET_K, k } : { code: BPF_RET_K, k, label });

function program(table: SyscallTable): Instruction[] {
  return [
    load(OFFSET_ARCH),
    { code: BPF_JMP_JEQ_K, k: table.auditArch, jt: 'next', jf: 'kill' },
    load(OFFSET_NR),
    ...(table.x32 ? [{ code: BPF_JMP_JGE_K, k: X32_SYSCALL_BIT, jt: 'kill', jf: 'next' } as Instruction] : []),
    ...table.denied.map((nr): Instruction => ({ code: BPF_JMP_JEQ_K, k: nr, jt: 'eperm', jf: 'next' })),
    { code: BPF_JMP_JEQ_K, k: table.clone3, jt: 'enosys', jf: 'next' },
    { code: BPF_JMP_JEQ_K, k: table.clone, jt: 'clone', jf: 'next' },
    { code: BPF_JMP_JEQ_K, k: table.socket, jt: 'socket', jf: 'next' },
    { code: BPF_JMP_JEQ_K, k: table.socketpair, jt: 'socket', jf: 'next' },
    ret(SECCOMP_RET_ALLOW),
    { ...load(OFFSET_ARG0), label: 'clone' },
    { code: BPF_JMP_JSET_K, k: CLONE_NAMESPACE_FLAGS, jt: 'eperm', jf: 'allow' },
    { ...load(OFFSET_ARG0), label: 'socket' },
    { code: BPF_JMP_JEQ_K, k: AF_UNIX, jt: 'allow', jf: 'eafnosupport' },
    ret(SECCOMP_RET_ALLOW, 'allow'),
    ret(SECCOMP_RET_ERRNO | EPERM, 'eperm'),
    ret(SECCOMP_RET_ERRNO | ENOSYS, 'enosys'),
    ret(SECCOMP_RET_ERRNO | EAFNOSUPPORT, 'eafnosupport'),
    ret(SECCOMP_RET_KILL_PROCESS, 'kill'),
  ];
}

/** The table for this machine, or null where no filter is defined (the ADR lists both). */
export function syscallTable(arch: string = process.arch): SyscallTable | null {
  if (arch === 'x64') return X86_64;
  if (arch === 'arm64') return AARCH64;
  return null;
}

/** The filter as bwrap reads it: an array of struct sock_filter, in the host's byte order (LE). */
export function compileSeccompFilter(table: SyscallTable): Buffer {
  const instructions = program(table);
  const at = new Map<Label, number>();
  instructions.forEach((instruction, index) => {
    if (instruction.label !== undefined) at.set(instruction.label, index);
  });
  const jump = (from: number, label: Label | undefined): number => {
    if (label === undefined || label === 'next') return 0;
    const target = at.get(label);
    if (target === undefined) throw new Error(`seccomp: no label ${label}`);
    const offset = target - (from + 1);
    if (offset < 0 || offset > 255) throw new Error(`seccomp: jump to ${label} out of range`);
    return offset;
  };
  const bytes = Buffer.alloc(instructions.length * 8);
  instructions.forEach((instruction, index) => {
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(jump(index, instruction.jt), index * 8 + 2);
    bytes.writeUInt8(jump(index, instruction.jf), index * 8 + 3);
    bytes.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
  });
  return bytes;
}
