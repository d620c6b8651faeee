export { openDatabase } from './database';
export type { Database } from './database';
export { migrate } from './migrate';
export { openMigratedMemoryDatabase } from './memory-template';
export { createStores } from './stores';
export { createDatabase, dropDatabase } from './admin';
export { createStepQueue, type DatabaseStepQueue } from './step-queue/step-queue';
export { createApiStores } from './api-stores';
export { checkReadiness, type DatabaseReadiness } from './readiness';
