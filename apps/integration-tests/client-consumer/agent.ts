// An agent outside the repository, written against the installed @veetbot/client tarball
// (test/client-tarball.test.ts copies this folder to a fresh temporary directory, installs the
// tarball there with npm, type-checks this file with the installed typescript, and runs it).
// It prints one JSON line of what it saw; the test asserts on it.
import { ApiError, Run, type StepOutcome, type StreamEvent, type SubmitStepRequest, VeetbotClient } from '@veetbot/client';

const baseUrl = process.env.VEETBOT_URL;
const apiKey = process.env.VEETBOT_API_KEY;
if (baseUrl === undefined || apiKey === undefined) throw new Error('VEETBOT_URL and VEETBOT_API_KEY are required');

const client = new VeetbotClient({ baseUrl, apiKey });
const health = await client.health();

const session = await client.openSession({ agent_id: 'tarball-agent', enabled_tools: ['math.*', 'demo.*'] });
const run = await client.createRun({ session_id: session.id, deadline_seconds: 300 });
// The wire schemas are values too: the bundle's zod parses what the api answered.
const parsedRun: Run = Run.parse(await client.getRun(run.id));

const step: SubmitStepRequest = {
  step_number: 1,
  calls: [
    { call_id: 'm', tool_name: 'math.evaluate', arguments: { expression: '6*7' }, context_trust: ['user'] },
    // Written after reading untrusted text: the policy holds it for an approval.
    { call_id: 'w', tool_name: 'demo.external_write', arguments: { line: 'from the tarball' }, context_trust: ['external_untrusted'] },
  ],
  wait_seconds: 20,
};
const first = await client.submitStep(run.id, step);
const approvalId = first.outcome.pending_approvals[0]?.approval_id;
if (approvalId === undefined || approvalId === null) throw new Error(`no approval pending: ${JSON.stringify(first.outcome)}`);
// Decide on what was read (docs/adr/0047): the listed approval is the binding.
const listed = (await client.listApprovals()).approvals.find((approval) => approval.id === approvalId);
const decided = await client.approve(approvalId, listed);

const settled: StepOutcome = await client.submitStepAndWait(run.id, { ...step, wait_seconds: 5 }, { timeoutMs: 60_000 });
const text = settled.items
  .find((item) => item.call_id === 'm')
  ?.content.map((part) => (part.type === 'text' ? part.text : ''))
  .join('');

// The event stream: replay the run's events from the start, stop after both calls completed.
const controller = new AbortController();
const timer = setTimeout(() => controller.abort(), 30_000);
const events: StreamEvent[] = [];
for await (const event of client.events({ runId: run.id, lastEventId: 0, signal: controller.signal })) {
  events.push(event);
  if (events.filter((e) => e.type === 'tool.call.completed').length === 2) controller.abort();
}
clearTimeout(timer);

let missing: { status: number; code: string } | null = null;
try {
  await client.getRun('00000000-0000-4000-8000-000000000000');
} catch (error) {
  if (error instanceof ApiError) missing = { status: error.status, code: error.code };
}

console.log(
  JSON.stringify({
    health: health.status,
    tools: session.tools.map((tool) => tool.name).sort(),
    run_status: parsedRun.status,
    first_status: first.outcome.status,
    approval_listed: listed?.tool_name ?? null,
    approval_status: decided.status,
    items: settled.items.map((item) => [item.call_id, item.outcome.status]),
    text,
    event_sequences: events.map((e) => e.sequence),
    event_types: events.map((e) => e.type),
    missing,
  }),
);
