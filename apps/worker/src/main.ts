import { VeetbotError } from '@veetbot/domain';
import { composeWorker, type WorkerComposition } from './compose';
import { readWorkerConfig } from './config';
import { consoleSink, logEvent } from './log';

/**
 * `pnpm start:worker` (ARCHITECTURE.md "Processes", production): a worker against the
 * PostgreSQL at DATABASE_URL. SIGTERM or SIGINT: stop claiming, let the batches in flight
 * finish (VEETBOT_WORKER_DRAIN_MS, default 20 s; each releases its run's lease as it ends),
 * close everything, exit 0. A second signal exits at once (1): leases left behind expire and
 * the recovery sweep of another worker takes over.
 */
async function main(): Promise<void> {
  const sink = consoleSink;
  let worker: WorkerComposition;
  let drainMs: number;
  try {
    const config = readWorkerConfig(process.env);
    drainMs = config.drainMs;
    worker = await composeWorker(config, {
      onEvent: (event) => logEvent(sink, event),
      onListenError: (error) => sink.error(`listen connection lost code=${VeetbotError.isInstance(error) ? error.code : 'unknown'} (reconnecting; polling meanwhile)`),
    });
  } catch (error) {
    fail(error);
    return;
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      sink.error(`${signal} again: exiting without waiting for ${worker.loop.inFlight} batch(es)`);
      process.exit(1);
    }
    stopping = true;
    sink.info(`${signal}: draining ${worker.loop.inFlight} batch(es) for up to ${drainMs} ms`);
    worker.shutdown(drainMs).then(
      (report) => {
        if (report.drained) sink.info('drained; leases released; exiting');
        else sink.error(`drain timed out: ${report.abandoned} batch(es) abandoned; their leases expire and the sweep recovers them`);
        process.exit(0);
      },
      (error: unknown) => {
        sink.error(`shutdown failed code=${VeetbotError.isInstance(error) ? error.code : 'unknown'}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  worker.loop.start();
  const s = worker.loop.settings;
  sink.info(`worker ${worker.owner} started: concurrency=${s.concurrency} poll_ms=${s.pollIntervalMs} sweep_ms=${s.sweepIntervalMs} data_dir=${worker.paths.dataDir}`);
}

/** One line, `<code>: <message>`, and exit 1. */
function fail(error: unknown): void {
  const code = VeetbotError.isInstance(error) ? error.code : 'startup.failed';
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${code}: ${message.split('\n').join(' ')}\n`);
  process.exit(1);
}

void main();
