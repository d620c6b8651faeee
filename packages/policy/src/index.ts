export * from './policy-profile';
export * from './default-profile';
export * from './default-policy-engine';
