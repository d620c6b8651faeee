import { describe, expect, it } from 'vitest';
import * as surface from '../src/index';

// The names this package's entry exports at run time (docs/adr/0031): a name is here only
// because another workspace package imports it; what only this package (or its own tests) uses
// stays off the entry and is imported by relative path. Type-only exports are invisible at run time and are
// not listed. To change the surface, edit src/index.ts and this list in the same commit.
const PUBLIC_SURFACE = [
  'AnswerQuestionRequest',
  'AnsweredQuestion',
  'ApiError',
  'CompleteRunRequest',
  'QuestionList',
  'RunList',
  'WorkingState',
  'Approval',
  'ApprovalList',
  'DecideApprovalRequest',
  'CreateMcpServerRequest',
  'CreateRunRequest',
  'DeferredToolEntry',
  'DeferredToolIndex',
  'Cursor',
  'EmptyBody',
  'ErrorBody',
  'EventsQuery',
  'Health',
  'Invocation',
  'InvocationList',
  'Limit',
  'ListApprovalsQuery',
  'ListInvocationsQuery',
  'ListUncertainQuery',
  'MAXIMUM_WAIT_SECONDS',
  'McpServer',
  'McpServerList',
  'McpServerPreparation',
  'NullableTimestamp',
  'OpenSessionRequest',
  'OperatorMcpServer',
  'OperatorMcpServerList',
  'PendingApproval',
  'PutSecretRequest',
  'Readiness',
  'ResolveReviewRequest',
  'Review',
  'ReviewResolution',
  'Run',
  'RunBudgets',
  'RunStatus',
  'CreateSkillRequest',
  'Secret',
  'SecretList',
  'SecretName',
  'Session',
  'Skill',
  'SkillList',
  'SkillMetadata',
  'SkillName',
  'SkillVersion',
  'StepOutcome',
  'StreamEvent',
  'SubmitStepRequest',
  'SubmittedCall',
  'Timestamp',
  'ToolDefinition',
  'UpdateMcpServerRequest',
  'VeetbotClient',
  'parseEventStream',
];

describe('@veetbot/client public surface', () => {
  it('exports at run time exactly the names other workspace packages import', () => {
    expect(Object.keys(surface).sort()).toEqual([...PUBLIC_SURFACE].sort());
  });
});
