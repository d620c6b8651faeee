import { VeetbotError } from '@veetbot/domain';
import type { WorkerComposition } from './compose';
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
  let worker: WorkerComposition | null = null;
  let drainMs = 0;
  let stopping = false;

  const shutDown = (current: WorkerComposition) => {
    sink.info(`draining ${current.loop.inFlight} batch(es) for up to ${drainMs} ms`);
    current.shutdown(drainMs).then(
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
  // Installed before anything starts: a signal during start-up stops the worker as soon as it
  // is composed, with nothing claimed.
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      sink.error(`${signal} again: exiting without waiting for ${worker?.loop.inFlight ?? 0} batch(es)`);
      process.exit(1);
    }
    stopping = true;
    sink.info(`${signal}: stopping`);
    if (worker !== null) shutDown(worker);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    const config = readWorkerConfig(process.env);
    drainMs = config.drainMs;
    // Loaded after the configuration is read: a configuration error is reported at once,
    // without first loading every adapter.
    const { composeWorker } = await import('./compose');
    worker = await composeWorker(config, {
      onEvent: (event) => logEvent(sink, event),
      onListenError: (error) => sink.error(`listen connection lost code=${VeetbotError.isInstance(error) ? error.code : 'unknown'} (reconnecting; polling meanwhile)`),
    });
  } catch (error) {
    fail(error);
    return;
  }
  if (stopping) {
    shutDown(worker);
    return;
  }
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
