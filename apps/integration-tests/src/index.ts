export * from './test-database';
export * from './demo-test-tools';
export * from './pipeline-harness';
export * from './sync';
