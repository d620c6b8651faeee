import { createHash } from 'node:crypto';
import { ApiError, VeetbotClient, type StepOutcome, type SubmitStepRequest } from '@veetbot/client';
import { SCRIPT } from './scripted-model';

/**
 * The walkthrough's agent: a scripted model driven against a running veetbot server through
 * @veetbot/client. `pnpm start` in one terminal, then
 * `VEETBOT_API_KEY=<the printed key> pnpm example:agent` in another.
 */
const baseUrl = process.env['VEETBOT_URL'] ?? 'http://127.0.0.1:8787';
const apiKey = process.env['VEETBOT_API_KEY'];

async function main(): Promise<void> {
  if (apiKey === undefined || apiKey === '') {
    console.error('VEETBOT_API_KEY is not set: use the demo key `pnpm start` printed.');
    process.exit(2);
  }
  const client = new VeetbotClient({ baseUrl, apiKey });

  const session = await client.openSession({ agent_id: 'scripted-agent' });
  console.log(`session ${session.id} (tool_schema_sha256 ${session.tool_schema_sha256})`);
  console.log(`pinned tools: ${session.tools.map((t) => t.name).join(', ')}`);
  const run = await client.createRun({ session_id: session.id, deadline_seconds: 600 });
  console.log(`run ${run.id}`);

  for (const [index, turn] of SCRIPT.entries()) {
    const request: SubmitStepRequest = { step_number: index + 1, calls: [...turn.calls], wait_seconds: 20 };
    console.log(`\nstep ${request.step_number}: ${turn.title}`);
    let outcome = await client.submitStepAndWait(run.id, request);

    if (outcome.status === 'waiting_for_approval') {
      for (const pending of outcome.pending_approvals) {
        console.log(`approval pending: call ${pending.call_id} (approval ${pending.approval_id})`);
        if (pending.approval_id === null) continue;
        // A real agent would ask a person; the script approves on their behalf (scope approvals.decide).
        const decided = await client.approve(pending.approval_id);
        console.log(`approval ${decided.status}: by ${decided.decided_by} at ${decided.decided_at}`);
      }
      // The same step again: the api re-runs the approved call once; the others are recorded.
      outcome = await client.submitStepAndWait(run.id, request);
    }
    if (outcome.status !== 'completed') throw new Error(`step ${request.step_number} did not complete: ${outcome.status}`);
    for (const item of outcome.items) {
      printItem(item);
      if (item.truncated && item.artifact_id !== null) await downloadArtifact(client, item.artifact_id);
    }
    checkRun(outcome);
  }

  await client.closeSession(session.id);
  console.log('\ndone: session closed');
}

type ToolResultItem = StepOutcome['items'][number];

function printItem(item: ToolResultItem): void {
  console.log(`ToolResultItem ${item.call_id} ${item.tool_name}: ${item.outcome.status}${item.truncated ? ' (truncated)' : ''}`);
  console.log(`  ${JSON.stringify(item)}`);
}

async function downloadArtifact(client: VeetbotClient, artifactId: string): Promise<void> {
  const artifact = await client.getArtifact(artifactId);
  const sha256 = createHash('sha256').update(artifact.bytes).digest('hex');
  const verified = artifact.sha256 === null ? 'no digest sent' : sha256 === artifact.sha256 ? 'sha256 verified' : 'SHA256 MISMATCH';
  console.log(`artifact ${artifactId}: ${artifact.bytes.byteLength} bytes, ${artifact.mediaType}, trust ${artifact.trust}, ${verified}`);
}

function checkRun(outcome: StepOutcome): void {
  if (outcome.run_status !== 'running') console.log(`run status: ${outcome.run_status}`);
}

main().catch((error: unknown) => {
  if (error instanceof ApiError) console.error(`api error ${error.status} ${error.code}: ${error.message}`);
  else console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
