import type { Remediation, ToolOutcomeStatus } from './enums';
import { ToolFailureKind } from './enums';

export interface ReasonCodeEntry {
  /** The outcome status this code is always reported under. */
  readonly status: ToolOutcomeStatus;
  /** The one fixed message (§ What the model reads): no rule, pattern, profile, host or trace. */
  readonly message: string;
  readonly retryable: boolean;
  readonly remediation: Remediation;
}

const e = (status: ToolOutcomeStatus, message: string, retryable: boolean, remediation: Remediation): ReasonCodeEntry => ({
  status,
  message,
  retryable,
  remediation,
});

/**
 * The checked-in reason-code table (RULINGS.md: every code has exactly one fixed message).
 * A test asserts every rendered outcome's message comes from here (Hard gate 4).
 */
export const REASON_CODES = {
  // --- success ---
  'tool.ok': e('succeeded', 'Completed.', false, 'none'),

  // --- denied: policy and the pipeline's own denials (no tool ran) ---
  'policy.matrix.unknown_tool': e('denied', 'Not performed. No such tool is available.', false, 'none'),
  'policy.tool.not_enabled': e('denied', 'Not performed. This tool is not enabled for this agent.', false, 'none'),
  'policy.scope.missing': e('denied', 'Not performed. The caller lacks a required permission.', false, 'none'),
  'policy.matrix.external_write': e('denied', 'Not performed. Approval was required and was denied.', false, 'none'),
  'policy.approval.denied': e('denied', 'Not performed. Approval was required and was denied.', false, 'none'),
  'policy.approval.expired': e('denied', 'Not performed. Approval was required and was not given in time.', false, 'none'),
  'policy.rule.denied': e('denied', 'Not performed. Policy does not allow this action.', false, 'none'),
  // docs/adr/0052: an operator tool that fetches URLs its caller names, not opted in.
  'policy.egress.url_fetch_refused': e(
    'denied',
    'Not performed. This tool fetches addresses, and the operator has not allowed that.',
    false,
    'none',
  ),
  'policy.origin.untrusted': e(
    'denied',
    'Not performed. This action is not allowed after untrusted content was read in this turn.',
    false,
    'ask_user',
  ),
  'policy.breaker.repeated_denial': e('denied', 'Not performed. This action was denied repeatedly; the run is stopped.', false, 'none'),
  'policy.breaker.uncertain_repeat': e(
    'denied',
    'Not performed. An identical call has an unknown outcome. Do not repeat it.',
    false,
    'none',
  ),
  'tool.not_found.not_offered': e('denied', 'Not performed. This tool is not offered in this session.', false, 'none'),

  // --- unavailable: no route right now (§ Advertisement is pinned) ---
  'tool.server_unreachable': e('unavailable', 'This capability is not reachable right now.', true, 'none'),
  'tool.server_unauthorized': e('unavailable', 'This capability is not authorized right now.', false, 'none'),
  'tool.withdrawn': e('unavailable', 'This capability has been withdrawn.', false, 'none'),
  'tool.device_offline': e('unavailable', 'The device for this capability is offline.', true, 'none'),
  'tool.auth_failed': e('unavailable', 'This capability could not authenticate.', false, 'none'),
  'tool.auth_unsupported': e('unavailable', 'This capability needs an authorization flow that is not supported.', false, 'none'),

  // --- uncertain ---
  'tool.outcome_unknown': e('uncertain', 'The outcome of this call is unknown. Do not repeat it.', false, 'none'),

  // --- failed: the pipeline's own failures ---
  'tool.arguments_invalid': e('failed', 'The arguments do not match the tool schema.', false, 'modify_arguments'),
  'tool.timeout': e('failed', 'The tool did not finish in time.', true, 'retry_later'),
  'tool.upstream_error': e('failed', 'The tool reported an error. Details follow as data.', true, 'modify_arguments'),
  'tool.run_cancelled': e('failed', 'Not completed. The run was cancelled.', false, 'none'),
  'tool.concurrency_conflict': e('failed', 'This call is already in progress.', true, 'retry_later'),
  'tool.loop_detected': e('failed', 'Not performed. This identical call was repeated without new results.', false, 'none'),
  'tool.budget_exhausted': e('failed', 'Not performed. The run has no tool budget left.', false, 'none'),
  // The run itself ended: a call made after its deadline (docs/adr/0020).
  'run.deadline_exceeded': e('failed', "Not performed. The run's deadline has passed; the run is stopped.", false, 'none'),
  'tool.recovery_exhausted': e('failed', 'Not completed. The call failed repeatedly during recovery.', false, 'none'),
  'tool.effect_guard_failed': e('failed', 'Not performed. The call could not be safely started.', true, 'retry_later'),

  // --- failed: the tool.{kind} family, one message per ToolFailureKind ---
  'tool.invalid_arguments': e('failed', 'The tool rejected its arguments.', false, 'modify_arguments'),
  'tool.not_found': e('failed', 'The tool could not find its target.', false, 'modify_arguments'),
  'tool.permission': e('failed', 'The remote system refused the request.', false, 'none'),
  'tool.output_too_large': e('failed', 'The tool produced more output than allowed.', false, 'modify_arguments'),
  'tool.output_invalid': e('failed', 'The tool ran, but its result did not match its declared shape.', false, 'none'),
  'tool.transport': e('failed', 'The tool could not be reached reliably.', true, 'retry_later'),
  'tool.internal': e('failed', 'The tool failed internally.', false, 'none'),

  // --- failed: local details whose kind's message would mislead (issue 10 item 9) ---
  // A workspace tool refused a path that leaves the run's workspace: nothing remote refused
  // anything, and the model can fix it by naming a path inside the workspace.
  'tool.permission.path_escape': e(
    'failed',
    'Not performed. The path is outside the workspace; use a relative path inside it.',
    false,
    'modify_arguments',
  ),
  // The local file system refused access (EACCES/EPERM) to a workspace path.
  'tool.permission.denied': e('failed', 'Not performed. The file system refused access to this path.', false, 'none'),
  // --- control tools and skills (§ Control tools; docs/adr/0034) ---
  'tool.not_found.skill': e('failed', 'Not performed. No skill by that name is available.', false, 'modify_arguments'),
  'tool.invalid_arguments.skill_exists': e(
    'failed',
    'Not performed. A skill with that name and version already exists; use update.',
    false,
    'modify_arguments',
  ),
  'tool.permission.skill_read_only': e('failed', 'Not performed. This skill is read-only.', false, 'none'),
  // skill.manage's own refusals (docs/adr/0036).
  'tool.invalid_arguments.skill_too_large': e(
    'failed',
    'Not performed. The skill content or description is too long; shorten it.',
    false,
    'modify_arguments',
  ),
  'tool.invalid_arguments.skill_version': e(
    'failed',
    'Not performed. Give a new version for this skill: the one given exists, or the latest is not a number.',
    false,
    'modify_arguments',
  ),
  'tool.invalid_arguments.skill_name_reserved': e(
    'failed',
    'Not performed. Skill names starting with "mcp." are reserved for MCP server prompts; choose another name.',
    false,
    'modify_arguments',
  ),
  'tool.invalid_arguments.working_state_version': e(
    'failed',
    'Not performed. The working state changed since the version given; read it again.',
    false,
    'modify_arguments',
  ),
  'tool.invalid_arguments.working_state_too_large': e(
    'failed',
    'Not performed. The working state document is too large.',
    false,
    'modify_arguments',
  ),
  'tool.permission.delegate_tools': e(
    'failed',
    'Not performed. A delegated run may use only tools this run offers.',
    false,
    'modify_arguments',
  ),
  // docs/adr/0050: a delegated run may itself delegate only down to the operator's depth limit.
  'tool.permission.delegation_depth': e(
    'failed',
    'Not performed. This run is as deep in a delegation tree as runs may go; do the task here.',
    false,
    'none',
  ),
  'tool.upstream_error.child_run': e('failed', 'The delegated run ended without a result.', false, 'none'),

  // --- sandbox.run_command: the sandbox's limits (docs/adr/0037). The kind's message would
  // mislead: nothing "failed internally" and no remote tool was late; the program hit a limit.
  'tool.timeout.sandbox': e('failed', 'The program did not finish within its time limit.', false, 'modify_arguments'),
  'tool.timeout.sandbox_cpu': e('failed', 'The program used all the CPU time it was allowed.', false, 'modify_arguments'),
  'tool.internal.sandbox_memory': e('failed', 'The program ran out of the memory it was allowed.', false, 'modify_arguments'),
  'tool.internal.sandbox_processes': e(
    'failed',
    'The program tried to start more processes than it was allowed.',
    false,
    'modify_arguments',
  ),
  'tool.internal.sandbox_start': e('failed', 'The sandbox could not start the program.', false, 'none'),
  // The run's workspace is at its disk cap (docs/adr/0058): a program killed for it, or a
  // workspace.write_text refused before writing. Freeing space (deleting files) lets it go on.
  'tool.output_too_large.workspace_disk': e(
    'failed',
    "The run's workspace reached its disk limit; delete files or write less.",
    false,
    'modify_arguments',
  ),
  // The confined workspace file helper could not serve the call (docs/adr/0058).
  'tool.internal.workspace_unavailable': e('failed', "The run's workspace could not be reached.", true, 'retry_later'),

  // --- the browser tools (docs/adr/0079): what the provider refused or ran out of. The page's
  // own words never reach these messages; what the proxy blocked is listed in the result.
  'tool.invalid_arguments.browser_url_refused': e(
    'failed',
    'Not opened. Only web addresses without user information can be opened.',
    false,
    'modify_arguments',
  ),
  'tool.permission.browser_egress_refused': e(
    'failed',
    'Not opened. The egress policy refuses that destination.',
    false,
    'modify_arguments',
  ),
  'tool.permission.browser_scheme_refused': e('failed', 'The page tried to leave the web and was stopped; it is now blank.', false, 'none'),
  'tool.timeout.browser_navigation': e('failed', 'The page did not finish loading in time.', true, 'retry_later'),
  'tool.timeout.browser_action': e('failed', 'The element did not accept the action in time.', true, 'modify_arguments'),
  'tool.invalid_arguments.browser_not_open': e('failed', 'This run has no open browser; open a page first.', false, 'modify_arguments'),
  'tool.not_found.browser_element': e('failed', 'No element has that reference; take a new snapshot.', false, 'modify_arguments'),
  'tool.invalid_arguments.browser_element_not_actionable': e(
    'failed',
    'The element does not accept that action.',
    false,
    'modify_arguments',
  ),
  'tool.internal.browser_capacity': e('failed', 'Every browser is in use; try again later.', true, 'retry_later'),
  'tool.internal.browser_start': e('failed', 'The browser could not start.', false, 'none'),

  // --- the orchestration bridge (docs/adr/0038): the per-turn call cap (§ Approvals inside a
  // script, "capped separately, default 64 per turn"). No tool ran; the script can stop.
  'bridge.calls_exhausted': e('failed', 'Not performed. This program has made every tool call one turn allows.', false, 'none'),
  // A control tool (or another orchestration) acts on the run, not the world: it is called by
  // the model directly, never from a program (docs/adr/0039).
  'bridge.tool_not_callable': e('failed', 'Not performed. This tool cannot be called from a program.', false, 'none'),
  // The answer a program never reads: its call waits for a person past the hold, and the
  // sandbox is being torn down (§ Approvals inside a script; docs/adr/0039).
  'bridge.approval_pending': e('failed', 'Not performed yet. This call waits for a person to approve it.', true, 'retry_later'),

  // --- web.fetch (docs/adr/0078): the egress policy's refusals, at the URL or any redirect hop,
  // and the bounded reader's limits. Each names what the model can change without naming an
  // address, a rule or the policy's switches.
  'tool.invalid_arguments.web_url_invalid': e('failed', 'Not performed. The URL is not a valid absolute URL.', false, 'modify_arguments'),
  'tool.permission.web_scheme_refused': e(
    'failed',
    'Not performed. Only secure web addresses can be fetched; file, data and other kinds of address are refused.',
    false,
    'modify_arguments',
  ),
  'tool.permission.web_host_not_allowed': e(
    'failed',
    'Not performed. This host is not one that may be fetched.',
    false,
    'modify_arguments',
  ),
  'tool.permission.web_address_refused': e(
    'failed',
    'Not performed. The address (or a redirect) leads to a private, local or metadata address, which cannot be fetched.',
    false,
    'modify_arguments',
  ),
  'tool.transport.web_resolve_failed': e('failed', 'The host name did not resolve.', true, 'modify_arguments'),
  'tool.transport.web_connect_failed': e('failed', 'The server could not be reached.', true, 'retry_later'),
  'tool.timeout.web_fetch': e('failed', 'The page did not arrive in time.', true, 'retry_later'),
  'tool.output_too_large.web_body': e('failed', 'The page is larger than this tool reads.', false, 'modify_arguments'),
  'tool.invalid_arguments.web_content_type': e(
    'failed',
    'Not read. The address returned content that is not HTML, text or JSON.',
    false,
    'modify_arguments',
  ),
  'tool.upstream_error.web_redirects': e('failed', 'The address redirected too many times.', false, 'modify_arguments'),
  'tool.upstream_error.web_response': e('failed', 'The server sent a response that could not be read.', false, 'modify_arguments'),
  'tool.upstream_error.web_search': e('failed', 'The search provider did not answer.', true, 'retry_later'),

  // --- an MCP server's response over the adapter's message cap (ADR 0021) ---
  'tool.output_too_large.mcp_response': e('failed', "The server's response was larger than allowed.", false, 'modify_arguments'),
  'tool.outcome_unknown.mcp_response_too_large': e(
    'uncertain',
    "The server's response was larger than allowed, so the outcome of this call is unknown. Do not repeat it.",
    false,
    'none',
  ),
} as const satisfies Record<string, ReasonCodeEntry>;

export type KnownReasonCode = keyof typeof REASON_CODES;

const FAMILY = new RegExp(`^tool\\.(${ToolFailureKind.options.join('|')})(\\.[a-z][a-z0-9_]*)+$`);

/** The kind of a `tool.{kind}.{detail}` code, or undefined. */
export function failureKindOfReasonCode(code: string): ToolFailureKind | undefined {
  const m = FAMILY.exec(code);
  return m ? (m[1] as ToolFailureKind) : undefined;
}

/**
 * The table entry for a code. `tool.{kind}.{detail}` codes share their kind's entry, so a
 * tool can name a detail without inventing text; the message stays fixed by kind.
 * `tool.timeout`, `tool.outcome_unknown` and `tool.upstream_error` are both table codes and
 * kinds; the exact code wins.
 */
export function reasonCodeEntry(code: string): ReasonCodeEntry | undefined {
  // Own properties only: `constructor`, `toString` and `__proto__` are not table codes.
  if (Object.hasOwn(REASON_CODES, code)) return (REASON_CODES as Record<string, ReasonCodeEntry>)[code];
  const kind = failureKindOfReasonCode(code);
  if (kind === undefined) return undefined;
  const family = `tool.${kind}`;
  return Object.hasOwn(REASON_CODES, family) ? (REASON_CODES as Record<string, ReasonCodeEntry>)[family] : failureKindEntry(kind);
}

function failureKindEntry(kind: ToolFailureKind): ReasonCodeEntry | undefined {
  switch (kind) {
    case 'timeout':
      return REASON_CODES['tool.timeout'];
    case 'upstream_error':
      return REASON_CODES['tool.upstream_error'];
    case 'outcome_unknown':
      return REASON_CODES['tool.outcome_unknown'];
    default:
      return undefined;
  }
}

export function isKnownReasonCode(code: string): boolean {
  return reasonCodeEntry(code) !== undefined;
}
