export type * from './tool';
export type * from './schema-validator';
export type * from './policy-engine';
export type * from './tool-registry';
export type * from './clock';
export type * from './stores';
export type * from './artifacts';
export type * from './mcp';
