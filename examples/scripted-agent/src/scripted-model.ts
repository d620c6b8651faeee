import type { StepOutcome, SubmittedCall } from '@veetbot/client';

/**
 * The "model": a fixed list of turns, each the tool calls a model would emit in that turn. No
 * model service is involved; the point is the loop around it (submit, approve, answer, delegate,
 * read artifacts).
 */
export interface ScriptedTurn {
  /** What the turn shows, printed before it is submitted. */
  readonly title: string;
  readonly calls: readonly SubmittedCall[];
  /** conversation.ask_user: what the person answers (the script plays the user too). */
  readonly user?: { readonly answer: string };
  /** delegate.run: the child run's agent — its one turn, and its final answer from that turn's outcome. */
  readonly child?: ScriptedChild;
  /** Read the run's working state back (GET /v1/runs/{id}/working-state) after the turn. */
  readonly readWorkingState?: boolean;
}

/** The agent of a delegated child run: it reads its brief, runs one turn, and completes the run. */
export interface ScriptedChild {
  readonly calls: readonly SubmittedCall[];
  readonly result: (outcome: StepOutcome) => string;
}

/**
 * The session's enabled_tools: the builtins the turns call, and the control tools (§ Control
 * tools) — a control tool is pinned and offered like any other, so it must be enabled to be called.
 */
export const ENABLED_TOOLS: readonly string[] = [
  'math.evaluate',
  'workspace.write_text',
  'workspace.read_text',
  'demo.external_write',
  'conversation.ask_user',
  'delegate.run',
  'context.update_working_state',
  'skill.load',
  'tool.call',
];

/**
 * Pinned but advertised only by a one-line entry of the deferred tool index (§ Control tools,
 * tool.call; docs/adr/0035): the model reaches it through tool.call. It stays pinned, so the
 * turns that call it directly still may (deferral is about context size, not permission).
 */
export const DEFERRED_TOOLS: readonly string[] = ['math.evaluate'];

/**
 * The operator skill the example creates (POST /v1/skills, the approver's key: skills.write)
 * before the session opens. It asks for web.search, which this session does not offer, so
 * skill.load returns it with a `skill.tool.missing` note (§ Skills; docs/adr/0036).
 */
export const SKILL = {
  name: 'metric-summary',
  description: 'How to write a short summary in metric units.',
  required_tools: ['math.evaluate', 'web.search'],
  content: 'Convert every quantity to metric units, check arithmetic with math.evaluate, and keep the summary under five lines.',
} as const;

/** The question the agent asks its user, and the user's scripted reply. */
export const QUESTION = 'Which unit system should the summary use?';
export const ANSWER = 'metric, please';
/** The delegated sub-task: a brief, and the only tool the child may use. */
export const CHILD_BRIEF = 'Evaluate 12 * 12 with math.evaluate and answer with the value.';

/** Larger than the 4,096-byte inline limit (output.inline_maximum_bytes): its read is truncated. */
export const BIG_FILE_TEXT = Array.from(
  { length: 160 },
  (_, i) => `line ${String(i).padStart(3, '0')}: the quick brown fox jumps over the lazy dog`,
).join('\n');

export const SCRIPT: readonly ScriptedTurn[] = [
  {
    title: 'a read-only call',
    calls: [{ call_id: 'call_math', tool_name: 'math.evaluate', arguments: { expression: '2 * (3 + 4) ^ 2' }, context_trust: ['user'] }],
  },
  {
    title: 'write a note, then read it back',
    calls: [
      {
        call_id: 'call_write',
        tool_name: 'workspace.write_text',
        arguments: { path: 'notes/hello.txt', text: 'hello from the scripted agent' },
        context_trust: ['user'],
      },
      { call_id: 'call_read', tool_name: 'workspace.read_text', arguments: { path: 'notes/hello.txt' }, context_trust: ['user'] },
    ],
  },
  {
    // Untrusted text (e.g. a web page) is in the context that produced this call: policy asks a
    // person before an external write (§ Approvals).
    title: 'an external write after reading untrusted text (needs approval)',
    calls: [
      {
        call_id: 'call_send',
        tool_name: 'demo.external_write',
        arguments: { line: 'summary sent by the scripted agent' },
        context_trust: ['user', 'external_untrusted'],
      },
    ],
  },
  {
    title: 'write a big file',
    calls: [
      {
        call_id: 'call_big_write',
        tool_name: 'workspace.write_text',
        arguments: { path: 'big.txt', text: BIG_FILE_TEXT },
        context_trust: ['user'],
      },
    ],
  },
  {
    title: 'read the big file (truncated; the whole result is an artifact)',
    calls: [{ call_id: 'call_big_read', tool_name: 'workspace.read_text', arguments: { path: 'big.txt' }, context_trust: ['user'] }],
  },
  {
    // § Control tools: the run waits for its user (waiting_for_user) until the question is
    // answered through POST /v1/questions/{id}/answer; the answer comes back with trust `user`.
    title: 'ask the user a question (conversation.ask_user)',
    calls: [{ call_id: 'call_ask', tool_name: 'conversation.ask_user', arguments: { question: QUESTION }, context_trust: ['user'] }],
    user: { answer: ANSWER },
  },
  {
    // A child run with a subset of the tools and part of the budget; its final answer joins this
    // call as EXTERNAL_UNTRUSTED (a model produced it), enveloped.
    title: 'delegate a sub-task to a child run (delegate.run)',
    calls: [
      {
        call_id: 'call_delegate',
        tool_name: 'delegate.run',
        arguments: { brief: CHILD_BRIEF, tools: ['math.evaluate'], maximum_tool_calls: 2 },
        context_trust: ['user'],
      },
    ],
    child: {
      calls: [{ call_id: 'child_math', tool_name: 'math.evaluate', arguments: { expression: '12 * 12' }, context_trust: ['user'] }],
      result: (outcome) => `12 * 12 = ${JSON.stringify((outcome.items[0]?.structured as { value?: unknown } | null)?.value)}`,
    },
  },
  {
    title: 'keep notes in the working state (context.update_working_state)',
    calls: [
      {
        call_id: 'call_state',
        tool_name: 'context.update_working_state',
        arguments: { document: { units: 'metric', child_result: '144', next: 'write the summary' } },
        // The child's (untrusted) answer is in the context now: a working-state write has no
        // effect on the world, so policy lets it through all the same.
        context_trust: ['user', 'external_untrusted'],
      },
    ],
    readWorkingState: true,
  },
  {
    // § Skills: only the metadata was listed; the content enters the turn here, labelled by its
    // author (an operator: trusted_configuration, not enveloped).
    title: 'load a skill (skill.load)',
    calls: [{ call_id: 'call_skill', tool_name: 'skill.load', arguments: { name: SKILL.name }, context_trust: ['user'] }],
  },
  {
    // § Control tools: tool.call is unwrapped before step 1 into the deferred tool it names,
    // which runs under its own name with the model's call id.
    title: 'call a deferred tool (tool.call)',
    calls: [
      {
        call_id: 'call_deferred',
        tool_name: 'tool.call',
        arguments: { name: 'math.evaluate', arguments: { expression: '9 * 9 + 19' } },
        context_trust: ['user'],
      },
    ],
  },
];
