export {
  isReadOnlySideEffect,
  isTerminalInvocationStatus,
  TERMINAL_INVOCATION_STATUSES,
  SideEffectClass,
  RiskLevel,
  IdempotencyClass,
  ToolKind,
  ToolSource,
  ToolOutcomeStatus,
  InvocationStatus,
  ToolFailureKind,
  SuspendedKind,
} from './enums';
export {
  isTrustBelow,
  minTrust,
  minimumTrust,
  clampTrust,
  callerTrustClaim,
  callerTrustMessage,
  TRUST_ORDER,
  TrustLevel,
  type CallerTrustClaim,
} from './trust';
export {
  VeetbotError,
  CanonicalizationError,
  ToolNotFoundError,
  RegistrationError,
  SchemaAdmissionError,
  ConfigurationError,
} from './errors';
export {
  isValidToolName,
  toolDomain,
  isValidServerId,
  normalizeRemoteToolName,
  mcpToolName,
  TOOL_NAME_PATTERN,
  ToolName,
  SERVER_ID_PATTERN,
  SERVER_ID_MAX_LENGTH,
} from './tool-name';
export { domainPartition, RESERVED_DOMAINS, CONTROL_TOOL_NAMES } from './domain-partition';
export { JsonSchemaDocument, TargetKind, ToolSpec, type ToolSpecInput } from './tool-spec';
export { ArtifactRef, ContentPart, ToolFailure, ToolResult, type ToolResultInput, toolFailure } from './tool-result';
export { SandboxEnding, sandboxEndingFailure } from './sandbox-ending';
export {
  BROWSER_DIAGNOSTICS_VERSION,
  BrowserDiagnostics,
  BrowserFailure,
  BrowserOutcome,
  BrowserPhase,
  BrowserPlacement,
  boundedTiming,
} from './browser-diagnostics';
export {
  compareCodePoints,
  canonicalJson,
  sha256Hex,
  argumentsHash,
  CANONICAL_MAX_DEPTH,
} from './canonical-json';
export { bridgeCallId, derivedUuid, idempotencyKey } from './idempotency-key';
export { decideRecovery } from './recovery-table';
export { failureKindOfReasonCode, reasonCodeEntry, isKnownReasonCode, REASON_CODES } from './reason-codes';
export { renderOutcome, OUTCOME_FIELDS } from './outcome';
export { hasScope, missingScopes, Principal } from './principal';
export { ProposedAction, PolicyEffect, PolicyDecision } from './policy-types';
export { platformRefusalItem, RenderedContentPart, ToolResultItem } from './tool-result-item';
export { type StoreErrorCode, StoreError, FencingError, InvalidTransitionError, ApprovalBindingError } from './store-errors';
export {
  contentBytes,
  inlineCeiling,
  hardCaptureCeiling,
  jsonEscapedBytes,
  formatByteCount,
  assertExcerptBudget,
  excerpt,
  renderInline,
  ExcerptBudgetError,
} from './excerpt';
export {
  type BreakerCall,
  type BreakerVerdict,
  BreakerCounter,
  BreakerEvidence,
  type BreakerEvidenceCall,
  EVIDENCE_CHECKPOINT_MAX_CALLS,
  IDENTICAL_CALL_THRESHOLD,
} from './breaker';
export {
  admitBatch,
  TOOL_CALL_NAME,
  runWithConcurrencyCap,
  DEFAULT_BATCH_CONCURRENCY,
  type BatchSpec,
  type BatchCall,
  type BatchBudget,
} from './batch-admission';
export { SubmittedCall, StepBatch, StepSubmission } from './step-batch';
export { type UnavailableReasonCode, ToolUnavailableError } from './tool-unavailable';
export { isTier0EnvironmentName, synthesizedEnvironment, TIER0_ENVIRONMENT_NAMES } from './child-environment';
export { unvalidatedRecord, UNVALIDATED_ARGUMENTS_KEY } from './unvalidated-arguments';
export {
  isAgentEditableSkill,
  isValidSkillName,
  latestSkillPerName,
  skillTrust,
  SKILL_CONTENT_MAX_BYTES,
  SKILL_DESCRIPTION_MAX_BYTES,
  SKILL_NAME_PATTERN,
  SKILL_REQUIRED_TOOLS_MAX,
  SKILL_VERSION_PATTERN,
  type SkillSource,
} from './skill';
export { RunFailureReason } from './run-failure';
export { REDACTED, SecretRedactor } from './secret-redactor';
export {
  isValidSecretName,
  parseCredentialRef,
  isCredentialRef,
  type CredentialRef,
  type CredentialOrigin,
  CREDENTIAL_REF_KINDS,
  SECRET_NAME_PATTERN,
  SECRET_VALUE_MAX_BYTES,
} from './credential-ref';
export {
  stringProblem,
  checkJsonValue,
  checkJsonText,
  describeJsonPath,
  quoteKey,
  JSON_MAX_DEPTH,
  STEP_BATCH_MAX_DEPTH,
  type JsonInputRefusal,
} from './json-input';
export { deferredToolIndex, type DeferredToolEntry } from './deferred-tool-index';
export { withoutHostPaths } from './host-paths';
export { TenantStepQuotas, NO_TENANT_STEP_QUOTAS, tenantStepQuota } from './tenant-step-quota';
