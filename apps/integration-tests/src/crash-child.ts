import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { FencingError, VeetbotError } from '@veetbot/domain';
import type { PipelineStepNumber } from '@veetbot/executor';
import { createStores, openDatabase } from '@veetbot/store-postgres';
import { CHILD_JOB_ENV, CHILD_SETUP_ENV, ChildSetup, CrashJob, FullCrashJob, type ChildMessage, type EffectPoint } from './crash-job';
import { composeCrashWorld } from './crash-world';

/**
 * A worker process that can be killed at any point of one call (Hard gate 7), raced against
 * another (Hard gate 8) or paused inside a tool (the fencing test). Run as
 * `node --import tsx src/crash-child.ts [job-json]` (or the bundle crash-child-process.ts
 * builds from this file). The whole job comes from argv or $VEETBOT_CRASH_JOB; or the setup
 * (database, folders, lease TTL) from $VEETBOT_CRASH_SETUP and the job as the first line of
 * stdin — such a child loads, composes and connects first and then waits, so a test can keep
 * one warm. It composes the real durable pipeline through Runtime over PostgreSQL,
 * holds the run lease with a short TTL (renewed by the Runtime every third of it) and submits
 * the step as the API would. `hooks.onStep(n)` SIGKILLs the process as step n begins; the
 * effect hooks of the tools kill it (or hold it) at the effect boundary inside step 10.
 */

function emit(message: ChildMessage): void {
  // Synchronous: the line is in the pipe before the next statement (a kill, an exit) runs.
  writeSync(1, `${JSON.stringify(message)}\n`);
}

/** Death by signal: nothing after this line runs, no finally block, no lease release. */
function die(): Promise<never> {
  process.kill(process.pid, 'SIGKILL');
  return new Promise<never>(() => undefined);
}

/** stdin as a queue of lines. */
class Lines {
  readonly #queued: string[] = [];
  readonly #waiting: ((line: string | null) => void)[] = [];
  #ended = false;
  #buffer = '';

  constructor(stream: NodeJS.ReadableStream) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (let newline = this.#buffer.indexOf('\n'); newline >= 0; newline = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        const waiter = this.#waiting.shift();
        if (waiter === undefined) this.#queued.push(line);
        else waiter(line);
      }
    });
    stream.on('end', () => {
      this.#ended = true;
      for (const waiter of this.#waiting.splice(0)) waiter(null);
    });
  }

  next(): Promise<string | null> {
    const queued = this.#queued.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** The next line equal to `word` (other lines are ignored); null when stdin ends first. */
  async expect(word: string): Promise<string | null> {
    for (let line = await this.next(); line !== null; line = await this.next()) if (line.trim() === word) return line;
    return null;
  }
}

function describeError(error: unknown): { name: string; code: string | null; message: string } {
  // By brand, not by class name: a bundler may rename classes.
  if (FencingError.isInstance(error)) return { name: 'FencingError', code: error.code, message: error.message };
  if (VeetbotError.isInstance(error)) return { name: error.name, code: error.code, message: error.message };
  if (error instanceof Error) return { name: error.name, code: null, message: error.message };
  return { name: typeof error, code: null, message: String(error) };
}

/** Setup and job: both from argv (or $VEETBOT_CRASH_JOB) in one document, else the setup from the environment and the job from stdin. */
function readSetup(): { setup: ChildSetup; job: CrashJob | null } {
  const whole = process.argv[2] ?? process.env[CHILD_JOB_ENV];
  if (whole !== undefined) {
    const full = FullCrashJob.parse(JSON.parse(whole));
    const { databaseUrl, leaseTtlMs, folders, ...job } = full;
    return { setup: { databaseUrl, leaseTtlMs, folders }, job };
  }
  const setup = process.env[CHILD_SETUP_ENV];
  if (setup === undefined) throw new Error(`crash-child needs a job (argv or $${CHILD_JOB_ENV}) or a setup ($${CHILD_SETUP_ENV})`);
  return { setup: ChildSetup.parse(JSON.parse(setup)), job: null };
}

async function main(): Promise<void> {
  const lines = new Lines(process.stdin);
  emit({ event: 'loaded', pid: process.pid, uptimeMs: Math.round(process.uptime() * 1000) });
  const { setup, job: given } = readSetup();
  const owner = `crash-child-${process.pid}-${randomBytes(4).toString('hex')}`;
  const applicationName = `veetbot-crash-${process.pid}-${randomBytes(4).toString('hex')}`;

  const url = new URL(setup.databaseUrl);
  url.searchParams.set('application_name', applicationName);
  const database = await openDatabase({ url: url.toString(), poolSize: 4 });
  const stores = createStores(database);

  // Filled in when the job arrives; the hooks read it.
  let job: CrashJob | null = given;
  const stepsReached: PipelineStepNumber[] = [];
  const atEffect = (point: EffectPoint) => async (): Promise<void> => {
    if (job?.inTool?.point !== point) return;
    if (job.inTool.action === 'die') return die();
    emit({ event: 'in_tool', point });
    await lines.expect('resume');
  };
  const { runtime } = composeCrashWorld({
    stores,
    owner,
    folders: setup.folders,
    hooks: {
      onStep(step) {
        stepsReached.push(step);
        if (step === job?.dieAtStep) return die();
        return undefined;
      },
    },
    effects: { beforeEffect: atEffect('before_effect'), afterEffect: atEffect('after_effect') },
    settings: { leaseTtlMs: setup.leaseTtlMs },
  });

  // A connection opened now, not on the call's clock (reads nothing: no such tenant).
  await stores.runs.get(`warm-up-${owner}`, '00000000-0000-4000-8000-000000000000');
  emit({ event: 'ready', pid: process.pid, owner, applicationName, uptimeMs: Math.round(process.uptime() * 1000) });

  if (job === null) {
    const line = await lines.next();
    // A warm child nobody needed: stdin closed.
    if (line === null || line.trim() === '') {
      await database.close().catch(() => undefined);
      process.exit(0);
    }
    job = CrashJob.parse(JSON.parse(line));
  }
  emit({ event: 'armed' });
  if (job.barrier && (await lines.expect('go')) === null) process.exit(2);

  try {
    const outcome = await runtime.submitStep(job.submission);
    emit({ event: 'outcome', outcome, stepsReached: [...stepsReached] });
  } catch (error) {
    emit({ event: 'error', ...describeError(error), stepsReached: [...stepsReached] });
  }
  await database.close().catch(() => undefined);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`crash-child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
