export * from './pipeline';
export * from './pipeline-deps';
export * from './pipeline-result';
export * from './pipeline-step';
export * from './tool-call-request';
export { originTrustOf, argumentTrustOf } from './steps/step-06-evaluate-policy';
