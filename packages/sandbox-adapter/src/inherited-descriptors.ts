import { readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

/**
 * The descriptors above 2 this process holds WITHOUT close-on-exec: ones it inherited from
 * whoever started it (Node opens everything close-on-exec itself). A spawned child would
 * inherit them, and bubblewrap closes nothing, so the adapter closes these before exec
 * (docs/adr/0037; sandbox-runtime's README warns of exactly this).
 */
export function inheritedDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fdinfo');
  } catch {
    return [];
  }
  const leaked: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${entry}`, 'utf8'));
      if (flags !== null && (Number.parseInt(flags[1] ?? '0', 8) & O_CLOEXEC) === 0) leaked.push(fd);
    } catch {
      // Closed meanwhile (the directory listing's own descriptor, for one).
    }
  }
  return leaked;
}

/**
 * The command that starts bwrap with `leaked` closed first: bash closes them and execs bwrap
 * (POSIX sh can name only single-digit descriptors). `--norc --noprofile`: stdin is a socket,
 * and bash would otherwise read ~/.bashrc as if started by rshd; `env -i`: bash exports PWD
 * and SHLVL, and bwrap must start with an empty environment. No leak: bwrap directly.
 */
export function withDescriptorsClosed(bwrap: string, args: readonly string[], leaked: readonly number[], bash: string): [string, string[]] {
  if (leaked.length === 0) return [bwrap, [...args]];
  const closes = leaked.map((fd) => `${fd}>&-`).join(' ');
  return [bash, ['--norc', '--noprofile', '-c', `exec ${closes}; exec /usr/bin/env -i "$@"`, 'bash', bwrap, ...args]];
}
