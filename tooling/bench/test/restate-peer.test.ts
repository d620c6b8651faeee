import { describe, expect, it } from 'vitest';
import '../src/promise-with-resolvers';
import { describePersistence, dumpConfig, parseDumpedConfig, restateServerBinary } from '../src/restate-peer';

describe('the Restate peer (docs/adr/0073)', () => {
  it('reads flat keys and [a.b] tables from a dumped configuration, unquoting strings', () => {
    const config = parseDumpedConfig(
      [
        'default-replication = 1',
        '',
        '[bifrost]',
        'default-provider = "replicated"',
        '[log-server]',
        'rocksdb-disable-wal-fsync = false',
      ].join('\n'),
    );
    expect(config.get('default-replication')).toBe('1');
    expect(config.get('bifrost.default-provider')).toBe('replicated');
    expect(config.get('log-server.rocksdb-disable-wal-fsync')).toBe('false');
    expect(config.get('default-provider')).toBeUndefined();
  });

  it("prints the pinned server's shipped log and flush settings, from the binary itself", async () => {
    const line = describePersistence(await dumpConfig(restateServerBinary(), [], { ...process.env }));
    expect(line).toContain('provider replicated, replication 1');
    expect(line).toContain('rocksdb-disable-wal-fsync = false');
    expect(line).not.toMatch(/provider not in the dump|replication not in the dump/);
  });

  it('gives Node 20 Promise.withResolvers before the SDK is loaded', async () => {
    const { promise, resolve } = Promise.withResolvers<number>();
    resolve(41);
    expect(await promise).toBe(41);
  });
});
