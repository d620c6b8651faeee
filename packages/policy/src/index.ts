export { PolicyProfile } from './policy-profile';
export { DefaultPolicyEngine } from './default-policy-engine';
