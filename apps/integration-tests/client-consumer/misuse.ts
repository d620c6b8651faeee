// Mistakes the published declarations must reject: test/client-tarball.test.ts expects tsc to
// report an error on each line marked `tsc-error`, and on no other line: the types are real, not `any`.
import { type SubmittedCall, VeetbotClient } from '@veetbot/client';

const client = new VeetbotClient({ baseUrl: 'http://127.0.0.1:1' });
await client.openSession({ agent_id: 42 }); // tsc-error: a number where the wire has a string
const trust: SubmittedCall['context_trust'] = ['root']; // tsc-error: a trust level the specification does not have
console.log(trust, (await client.getRun('run')).owner); // tsc-error: a field a run does not have
