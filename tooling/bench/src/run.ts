import os from 'node:os';
import { benchPipelineStepsOneToSeven } from './pipeline-steps-1-7.bench';

const suites: Array<[string, () => Promise<string[]>]> = [['pipeline steps 1–7', benchPipelineStepsOneToSeven]];

console.log(`veetbot bench — ${new Date().toISOString()} — node ${process.version} — ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}`);
for (const [name, run] of suites) {
  console.log(`\n## ${name}`);
  for (const line of await run()) console.log(line);
}
