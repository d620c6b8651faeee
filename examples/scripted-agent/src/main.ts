import { createHash } from 'node:crypto';
import { ApiError, VeetbotClient, type StepOutcome, type SubmitStepRequest } from '@veetbot/client';
import { DEFERRED_TOOLS, ENABLED_TOOLS, SCRIPT, SKILL, type ScriptedChild, type ScriptedTurn } from './scripted-model';

/**
 * The walkthrough's agent: a scripted model driven against a running veetbot server through
 * @veetbot/client, with two keys (README "Walkthrough"): the agent's (VEETBOT_API_KEY, neither
 * approvals.decide nor questions.answer) runs the tools and plays the agent of a delegated child
 * run; the approver's (VEETBOT_APPROVER_KEY: approvals.decide, questions.answer, skills.write)
 * stands for the people on the other side: the user who answers the agent's questions (an answer
 * is USER trust, so the agent may not give it itself: docs/adr/0051), who decides an approval, and
 * the operator who writes the operator skill the agent loads.
 */
const baseUrl = process.env.VEETBOT_URL ?? 'http://127.0.0.1:8787';
const apiKey = process.env.VEETBOT_API_KEY;
const approverKey = process.env.VEETBOT_APPROVER_KEY;

const KEYS_HELP = `Create the two keys first (README "Walkthrough"):
  pnpm veetbot key create --tenant demo --principal agent --scopes workspace.read,workspace.write,demo.write,mcp.*
  pnpm veetbot key create --tenant demo --principal approver --scopes approvals.decide,review.resolve,questions.answer,skills.write`;

async function main(): Promise<void> {
  if (apiKey === undefined || apiKey === '' || approverKey === undefined || approverKey === '') {
    console.error(`VEETBOT_API_KEY (the agent's key) and VEETBOT_APPROVER_KEY (the approver's) must both be set.\n${KEYS_HELP}`);
    process.exit(2);
  }
  const client = new VeetbotClient({ baseUrl, apiKey });
  const approver = new VeetbotClient({ baseUrl, apiKey: approverKey });

  await createSkill(approver);

  const session = await client.openSession({
    agent_id: 'scripted-agent',
    enabled_tools: [...ENABLED_TOOLS],
    deferred_tools: [...DEFERRED_TOOLS],
  });
  console.log(`session ${session.id} (tool_schema_sha256 ${session.tool_schema_sha256})`);
  // The pin is the advertised definitions and the deferred tools together (docs/adr/0035).
  console.log(`pinned tools: ${[...session.tools.map((t) => t.name), ...session.deferred_tools].join(', ')}`);
  const index = await client.getDeferredTools(session.id);
  for (const entry of index.tools) console.log(`deferred tool index: ${entry.name} — ${entry.description}`);
  // § Skills: the advertised block is metadata only; the content enters on skill.load.
  const { skills } = await client.listSkills();
  for (const skill of skills)
    console.log(
      `skill advertised: ${skill.name} v${skill.version} (${skill.source}) requires [${skill.required_tools.join(', ')}]: ${skill.description}`,
    );
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
        // The agent cannot approve its own call: its key lacks approvals.decide.
        const refused = await client.approve(pending.approval_id).then(
          () => null,
          (error: unknown) => (error instanceof ApiError ? `${error.status} ${error.code}` : String(error)),
        );
        if (refused === null)
          throw new Error(`the agent's key approved call ${pending.call_id}: give the agent a key without approvals.decide`);
        console.log(`agent's own approval refused: ${refused}`);
        // A person decides; the script acts for them with the approver's key. The decision names
        // the arguments hash and policy version the approver read (docs/adr/0047): if either
        // changed since, it is refused and the approval must be read again.
        const shown = (await approver.listApprovals()).approvals.find((a) => a.id === pending.approval_id);
        if (shown === undefined) throw new Error(`approval ${pending.approval_id} is no longer pending`);
        console.log(
          `approver reads: ${shown.tool_name} ${JSON.stringify(shown.arguments)} (arguments ${shown.arguments_hash}, policy ${shown.policy_rule_id} ${shown.policy_version})`,
        );
        const decided = await approver.approve(pending.approval_id, shown);
        console.log(`approval ${decided.status}: by ${decided.decided_by} at ${decided.decided_at}`);
      }
      // The same step again: the api re-runs the approved call once; the others are recorded.
      outcome = await client.submitStepAndWait(run.id, request);
    }
    if (outcome.status === 'suspended') {
      await resolveSuspended(client, approver, run.id, turn, outcome);
      // The same step again: the suspended call now holds the answer or the child's result.
      outcome = await client.submitStepAndWait(run.id, request);
    }
    if (outcome.status !== 'completed') throw new Error(`step ${request.step_number} did not complete: ${outcome.status}`);
    for (const item of outcome.items) {
      printItem(item);
      if (item.truncated && item.artifact_id !== null) await downloadArtifact(client, item.artifact_id);
    }
    if (turn.readWorkingState === true) {
      const state = await client.getWorkingState(run.id);
      console.log(`working state v${state.version}: ${JSON.stringify(state.document)}`);
    }
    checkRun(outcome);
  }

  await client.closeSession(session.id);
  console.log('\ndone: session closed');
}

type ToolResultItem = StepOutcome['items'][number];

/**
 * The operator's skill, written with the approver's key (skills.write; docs/adr/0036). A re-run
 * finds it already there: 409 `skill.exists` for the same name and version is fine.
 */
async function createSkill(approver: VeetbotClient): Promise<void> {
  try {
    const created = await approver.createSkill({ ...SKILL, required_tools: [...SKILL.required_tools] });
    console.log(`skill created: ${created.name} v${created.version} (${created.source}, trust ${created.trust})`);
  } catch (error: unknown) {
    if (!(error instanceof ApiError && error.status === 409 && error.code === 'skill.exists')) throw error;
    console.log(`skill exists: ${SKILL.name} (made by an earlier run)`);
  }
}

/**
 * § Control tools: a suspended call waits for something outside the run. `user_input`: a
 * question to the user — the script answers it as the user would, with POST
 * /v1/questions/{id}/answer and the user's key (the agent's own is refused). `child_run`: a delegated child run — the script plays its agent.
 * `approval`: sandbox.run_orchestration waiting for a person (not in this script).
 * (skill.load and tool.call never suspend: they conclude in their own step.)
 */
async function resolveSuspended(
  client: VeetbotClient,
  person: VeetbotClient,
  runId: string,
  turn: ScriptedTurn,
  outcome: StepOutcome,
): Promise<void> {
  console.log(`run status: ${outcome.run_status}`);
  for (const call of outcome.suspended) {
    if (call.kind === 'user_input') {
      const { questions } = await client.listQuestions(runId);
      const question = questions.find((q) => q.question_id === call.ref);
      if (question === undefined || turn.user === undefined) throw new Error(`no scripted answer for question ${call.ref}`);
      console.log(`question ${question.question_id} (call ${question.call_id}): ${question.question}`);
      // The agent cannot answer its own question: its key lacks questions.answer (docs/adr/0051).
      const refused = await client.answerQuestion(question.question_id, turn.user.answer).then(
        () => null,
        (error: unknown) => (error instanceof ApiError ? `${error.status} ${error.code}` : String(error)),
      );
      if (refused === null)
        throw new Error(`the agent's key answered question ${question.question_id}: give the agent a key without questions.answer`);
      console.log(`agent's own answer refused: ${refused}`);
      const answered = await person.answerQuestion(question.question_id, turn.user.answer);
      console.log(`answered: ${turn.user.answer} (item trust ${answered.item.trust})`);
    } else if (call.kind === 'child_run') {
      if (turn.child === undefined) throw new Error(`no scripted agent for child run ${call.ref}`);
      await runChild(client, call.call_id, call.ref, turn.child);
    } else {
      // `approval`: an orchestration's program waited for a person past the hold (docs/adr/0039);
      // this script orchestrates nothing, so it never meets one.
      throw new Error(`call ${call.call_id} waits for approval ${call.ref}`);
    }
  }
}

/** The child's agent: its brief is its working state (version 1), it runs one step, and completes the run. */
async function runChild(client: VeetbotClient, callId: string, childId: string, child: ScriptedChild): Promise<void> {
  console.log(`delegated: call ${callId} started child run ${childId}`);
  const brief = await client.getWorkingState(childId);
  console.log(`child brief (working state v${brief.version}): ${String(brief.document.brief)}`);
  const outcome = await client.submitStepAndWait(childId, { step_number: 1, calls: [...child.calls], wait_seconds: 20 });
  if (outcome.status !== 'completed') throw new Error(`the child's step did not complete: ${outcome.status}`);
  for (const item of outcome.items) printItem(item);
  const completed = await client.completeRun(childId, child.result(outcome));
  console.log(`child run ${completed.id} ${completed.status}: ${completed.result}`);
}

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
