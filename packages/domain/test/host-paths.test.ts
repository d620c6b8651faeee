import { describe, expect, it } from 'vitest';
import { HOST_PATH_MARKER, withoutHostPaths } from '../src/host-paths';

describe('withoutHostPaths (docs/adr/0058)', () => {
  it.each([
    [
      "ENOENT: no such file or directory, open '/srv/veetbot/workspaces/ab/run/x.txt'",
      "ENOENT: no such file or directory, open '<host path>'",
    ],
    ['EACCES: permission denied, mkdir /root/.veetbot/secrets.key', 'EACCES: permission denied, mkdir <host path>'],
    ['spawn /usr/bin/node ENOENT', 'spawn <host path> ENOENT'],
    ['at /work/main/.veetbot/bridge/abc/bridge.sock: in use', `at ${HOST_PATH_MARKER}: in use`],
  ])('%s', (input, expected) => {
    expect(withoutHostPaths(input)).toBe(expected);
  });

  it('keeps text that names no absolute path: relative paths, URLs, a lone slash, MIME types', () => {
    for (const text of ['docs/a.txt not found', 'GET https://example.com/a/b failed', 'a / b', 'text/plain', 'Error: x']) {
      expect(withoutHostPaths(text)).toBe(text);
    }
  });
});
