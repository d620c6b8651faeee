export * from './wire';
export { VeetbotClient, type VeetbotClientOptions, type FetchLike, type StepSubmission, type Artifact, type EventsOptions } from './client';
export { ApiError } from './api-error';
export { parseEventStream, type SseMessage } from './sse';
