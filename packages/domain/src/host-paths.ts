/**
 * Issue 23 item 3 (docs/adr/0058): a tenant never learns a host path. A thrown error's message
 * (Node's `ENOENT: no such file or directory, open '/srv/veetbot/…'`) is operator text that
 * reaches a tenant-readable row as a failure's detail; every absolute path of two or more
 * components in it is replaced before it is stored. One function, used wherever foreign error
 * text becomes a detail.
 */
const ABSOLUTE_PATH = /(?<![\w.~:/-])\/(?:[^\s/'"`:,;()<>[\]{}|]+\/)+[^\s/'"`:,;()<>[\]{}|]*/g;

export const HOST_PATH_MARKER = '<host path>';

export function withoutHostPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, HOST_PATH_MARKER);
}
