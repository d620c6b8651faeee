// Bench only (issue 31 item 3, docs/adr/0076): loaded into the built api and worker processes with
// `node --import` by the `restate` suite, never by a deployment. It records, on the machine's
// monotonic clock (process.hrtime, the same clock in every process), when each PostgreSQL
// statement starts and ends (pg's Client.query, by prepared name or first words), each
// notification that arrives, and each HTTP request's start and finish (Node's own diagnostics
// channels), in a bounded ring; SIGUSR2 writes the ring to BENCH_HOP_PROBE_FILE.<pid> (then renames it
// into place, so the reader never sees half a file). Plain JavaScript: the bundles run under plain node.
import dc from 'node:diagnostics_channel';
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.BENCH_HOP_PROBE_FILE;
const pgPath = process.env.BENCH_HOP_PROBE_PG;
const CAPACITY = 50_000;
const times = new Array(CAPACITY);
const kinds = new Array(CAPACITY);
const names = new Array(CAPACITY);
let next = 0;

const record = (kind, name) => {
  const i = next % CAPACITY;
  times[i] = process.hrtime.bigint();
  kinds[i] = kind;
  names[i] = name;
  next += 1;
};

const statementName = (config) => {
  if (typeof config === 'string') return config.trim().split(/\s+/, 2).join(' ').slice(0, 40);
  if (config !== null && typeof config === 'object') {
    if (typeof config.name === 'string') return config.name;
    if (typeof config.text === 'string') {
      const fn = /\b(pg_notify|veetbot_[a-z_]+)\s*\(/.exec(config.text);
      return fn === null ? config.text.trim().split(/\s+/, 2).join(' ').slice(0, 40) : fn[1];
    }
  }
  return 'unknown';
};

if (file !== undefined && pgPath !== undefined) {
  const pg = createRequire(import.meta.url)(pgPath);
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function probedQuery(config, values, callback) {
    const name = statementName(config);
    record('qs', name);
    const done = () => record('qe', name);
    if (typeof callback === 'function')
      return query.call(this, config, values, (...a) => {
        done();
        callback(...a);
      });
    if (typeof values === 'function')
      return query.call(this, config, (...a) => {
        done();
        values(...a);
      });
    const result = query.call(this, config, values, callback);
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') result.then(done, done);
    return result;
  };
  const emit = pg.Client.prototype.emit;
  pg.Client.prototype.emit = function probedEmit(event, message, ...rest) {
    if (event === 'notification') record('n', message?.channel ?? 'unknown');
    return emit.call(this, event, message, ...rest);
  };
  dc.subscribe('http.server.request.start', (m) => record('rq', `${m.request.method} ${m.request.url}`.slice(0, 60)));
  dc.subscribe('http.server.response.finish', (m) => record('rs', `${m.request.method} ${m.request.url}`.slice(0, 60)));
  process.on('SIGUSR2', () => {
    const lines = [];
    for (let n = Math.max(0, next - CAPACITY); n < next; n++) {
      const i = n % CAPACITY;
      lines.push(`${times[i]}\t${kinds[i]}\t${names[i]}`);
    }
    writeFileSync(`${file}.${process.pid}.tmp`, `${lines.join('\n')}\n`);
    renameSync(`${file}.${process.pid}.tmp`, `${file}.${process.pid}`);
  });
}
